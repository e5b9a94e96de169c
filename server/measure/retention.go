package measure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/store"
)

// RetentionConfig configures the retention loop; its zero value works.
type RetentionConfig struct {
	Days      int           // keep this many days of impressions and goal events; 90 when 0
	Interval  time.Duration // time between purges; 1 hour when 0
	BatchSize int32         // rows deleted per statement; 5000 when 0
}

func (c RetentionConfig) withDefaults() RetentionConfig {
	if c.Days <= 0 {
		c.Days = 90
	}
	if c.Interval <= 0 {
		c.Interval = time.Hour
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 5000
	}
	return c
}

// PurgeResult counts what one purge removed or recomputed.
type PurgeResult struct {
	Cutoff         time.Time
	Impressions    int64
	Summaries      int64
	GoalEvents     int64
	UsersRefreshed int64 // per-user rows (impression_users) recomputed or deleted
	GoalEventUsers int64
}

// RetentionCutoff is the first instant that is kept: UTC midnight of the
// day days days before now. Aligning the cutoff to UTC days keeps the daily
// rollups exactly equal to the raw rows that remain.
func RetentionCutoff(now time.Time, days int) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -days)
}

// PurgeExpired deletes impressions and goal events older than the retention
// cutoff, in batches of short transactions so ingest is never blocked for
// long, and brings the rollups in step with the rows that remain.
func (s *Service) PurgeExpired(ctx context.Context, cfg RetentionConfig) (PurgeResult, error) {
	// Fold first, so the rollups hold every row the purge removes and the
	// refresh below starts from complete first exposures (rollups.go).
	if err := s.foldPending(ctx); err != nil {
		return PurgeResult{}, err
	}
	cfg = cfg.withDefaults()
	cutoff := RetentionCutoff(s.now(), cfg.Days)
	res := PurgeResult{Cutoff: cutoff}
	q := db.New(s.pool)
	steps := []struct {
		name  string
		total *int64
		run   func() (int64, error)
	}{
		{"impressions", &res.Impressions, func() (int64, error) {
			return q.DeleteExpiredImpressions(ctx, db.DeleteExpiredImpressionsParams{Cutoff: cutoff, BatchSize: cfg.BatchSize})
		}},
		{"per-user rows", &res.UsersRefreshed, func() (int64, error) {
			return s.refreshExpiredUsers(ctx, cutoff, cfg.BatchSize)
		}},
		{"summaries", &res.Summaries, func() (int64, error) {
			return q.DeleteExpiredSummaries(ctx, db.DeleteExpiredSummariesParams{Cutoff: cutoff, BatchSize: cfg.BatchSize})
		}},
		{"goal events", &res.GoalEvents, func() (int64, error) {
			return q.DeleteExpiredGoalEvents(ctx, db.DeleteExpiredGoalEventsParams{Cutoff: cutoff, BatchSize: cfg.BatchSize})
		}},
		{"goal event users", &res.GoalEventUsers, func() (int64, error) {
			return s.deleteExpiredGoalEventUsers(ctx, cutoff, cfg.BatchSize)
		}},
	}
	for _, step := range steps {
		for {
			n, err := step.run()
			if err != nil {
				return res, fmt.Errorf("purge %s: %w", step.name, err)
			}
			*step.total += n
			// A short batch means nothing older is left (rows locked by a
			// concurrent purge are skipped and left for the next run).
			if n < int64(cfg.BatchSize) {
				break
			}
		}
	}
	if _, err := q.DeleteExpiredImpressionDays(ctx, pgtype.Date{Time: cutoff, Valid: true}); err != nil {
		return res, fmt.Errorf("purge impression days: %w", err)
	}
	// Flag status reads the hours of its 168-hour window and no older.
	if _, err := q.DeleteExpiredEvaluationHours(ctx, s.now().Add(-statusWindow-24*time.Hour)); err != nil {
		return res, fmt.Errorf("purge evaluation hours: %w", err)
	}
	if _, err := q.DeleteEmptyEventKeys(ctx); err != nil {
		return res, fmt.Errorf("purge event keys: %w", err)
	}
	return res, nil
}

// refreshExpiredUsers recomputes or deletes one batch of per-user rows
// whose first impression is older than cutoff. It holds the impression
// fold's watermark lock, as a fold does: the fold is the table's only other
// writer, and decides from what it reads whether to insert or update. The
// batch's users leave the experiment counts (experiment_counts.go) before
// their rows move and come back with their new first exposures.
func (s *Service) refreshExpiredUsers(ctx context.Context, cutoff time.Time, batch int32) (int64, error) {
	n, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (int64, error) {
		if _, err := q.LockRollupWatermark(ctx, rollupImpressions); err != nil {
			return 0, err
		}
		if err := q.LockExperimentCounts(ctx); err != nil {
			return 0, err
		}
		rows, err := q.ListExpiredImpressionUsers(ctx, db.ListExpiredImpressionUsersParams{Cutoff: cutoff, BatchSize: batch})
		if err != nil || len(rows) == 0 {
			return 0, err
		}
		flagNos, userIDs := make([]int32, len(rows)), make([]string, len(rows))
		for i, r := range rows {
			flagNos[i], userIDs[i] = r.FlagNo, r.UserID
		}
		adjust := func(sign int64) error {
			return q.AdjustExperimentUsers(ctx, db.AdjustExperimentUsersParams{FlagNos: flagNos, UserIds: userIDs, Sign: sign})
		}
		if err := adjust(-1); err != nil {
			return 0, err
		}
		if err := q.RefreshExpiredImpressionUsers(ctx, db.RefreshExpiredImpressionUsersParams{FlagNos: flagNos, UserIds: userIDs, Cutoff: cutoff}); err != nil {
			return 0, err
		}
		// A moved or deleted row may have been, or may now be, its user's
		// first exposure.
		if err := q.MarkFirstExposures(ctx, db.MarkFirstExposuresParams{FlagNos: flagNos, UserIds: userIDs}); err != nil {
			return 0, err
		}
		return int64(len(rows)), adjust(1)
	})
	return n, store.AdaptError(err)
}

// deleteExpiredGoalEventUsers deletes one batch of users' latest goal
// events older than cutoff, taking them out of the experiments they
// converted in, under the experiment counts' lock.
func (s *Service) deleteExpiredGoalEventUsers(ctx context.Context, cutoff time.Time, batch int32) (int64, error) {
	n, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (int64, error) {
		if err := q.LockExperimentCounts(ctx); err != nil {
			return 0, err
		}
		return q.DeleteExpiredGoalEventUsers(ctx, db.DeleteExpiredGoalEventUsersParams{Cutoff: cutoff, BatchSize: batch})
	})
	return n, store.AdaptError(err)
}

// RunRetention purges expired measurement data once at start and then every
// cfg.Interval until ctx ends. Failures are logged and retried at the next
// interval; they never stop the loop.
func (s *Service) RunRetention(ctx context.Context, cfg RetentionConfig) {
	cfg = cfg.withDefaults()
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		res, err := s.PurgeExpired(ctx, cfg)
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			s.logger.Error("retention purge failed", "err", err.Error())
		case err == nil && res.Impressions+res.GoalEvents > 0:
			s.logger.Info("retention purge", "cutoff", res.Cutoff, "impressions", res.Impressions, "summaries", res.Summaries, "goal_events", res.GoalEvents)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RefreshStatistics gathers fresh planner statistics for the measurement
// tables that grew since theirs were gathered, and returns their names:
// with autovacuum off or behind a burst, the plans of the reads would
// otherwise follow statistics of a much smaller table. One instance at a
// time; on the others it returns nothing.
func (s *Service) RefreshStatistics(ctx context.Context) ([]string, error) {
	names, err := db.New(s.pool).RefreshMeasurementStatistics(ctx)
	if err != nil {
		return nil, fmt.Errorf("refresh measurement statistics: %w", err)
	}
	return names, nil
}
