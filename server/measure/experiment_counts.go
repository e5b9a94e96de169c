package measure

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/store"
)

// An experiment's result is kept, not computed at read time
// (migrations/00023_experiment_counts.sql): for each (flag, goal event key)
// an experiment measures, a metric holds per arm the users whose first
// exposure was that arm and how many of them converted. Every transaction
// that changes a user's first exposure (the impression fold, retention) or
// latest goal event (the goal event fold, retention) changes the counts of
// each ready metric by that user's move, in the same statement, so the
// counts always equal what the rollups they are committed with would give.
// Those transactions, the builder below and the experiment writes that
// drop metrics take one lock first (LockExperimentCounts): a move is
// decided from both rollups, which two folds must not change at once.
//
// A read adds to the counts the users of the raw rows past the watermarks
// (ListExperimentArmCounts), as the other reads do (read.go): a lookup and
// the tail, whatever the experiment's size.

// experimentArms reads an experiment's arms in a read's snapshot: from the
// kept counts when its metric is ready, else computed from every exposed
// user (recomputed is then true).
func experimentArms(ctx context.Context, q *db.Queries, e db.Experiment, marks db.GetRollupWatermarksRow) (arms []db.ListExperimentArmsRow, recomputed bool, err error) {
	ready, err := q.GetExperimentMetricReady(ctx, db.GetExperimentMetricReadyParams{
		EnvironmentID: e.EnvironmentID, FlagKey: e.FlagKey, EventKey: e.GoalEventKey,
	})
	if err != nil {
		return nil, false, err
	}
	if !ready {
		arms, err = q.ListExperimentArms(ctx, db.ListExperimentArmsParams{
			EnvironmentID: e.EnvironmentID, FlagKey: e.FlagKey, GoalEventKey: e.GoalEventKey,
			ImpressionsAfter: marks.Impressions, EventsAfter: marks.Events,
		})
		return arms, true, err
	}
	rows, err := q.ListExperimentArmCounts(ctx, db.ListExperimentArmCountsParams{
		EnvironmentID: e.EnvironmentID, FlagKey: e.FlagKey, GoalEventKey: e.GoalEventKey,
		ImpressionsAfter: marks.Impressions, EventsAfter: marks.Events,
	})
	arms = make([]db.ListExperimentArmsRow, len(rows))
	for i, r := range rows {
		arms[i] = db.ListExperimentArmsRow(r)
	}
	return arms, false, err
}

// keepExperimentCounts makes sure the counts of e's flag and goal event key
// are kept: a new metric is counted by the builder, and read through the
// full computation until then. It takes the counts' lock first, as
// dropUnusedExperimentCounts does, so that an experiment write that drops
// the metric a concurrent one is adding an experiment to runs wholly before
// or after it.
func keepExperimentCounts(ctx context.Context, q *db.Queries, e db.Experiment) error {
	if err := q.LockExperimentCounts(ctx); err != nil {
		return err
	}
	return q.EnsureExperimentMetric(ctx, db.EnsureExperimentMetricParams{
		EnvironmentID: e.EnvironmentID, FlagKey: e.FlagKey, EventKey: e.GoalEventKey,
	})
}

// dropUnusedExperimentCounts stops keeping the environment's counts that no
// experiment measures any more, after the write that left them unused.
func dropUnusedExperimentCounts(ctx context.Context, q *db.Queries, envID uuid.UUID) error {
	if err := q.LockExperimentCounts(ctx); err != nil { // a second time in a PATCH: granted at once
		return err
	}
	return q.DeleteUnusedExperimentMetrics(ctx, envID)
}

// BuildExperimentCounts counts one experiment metric that is not ready yet
// from the rollups and marks it ready, so that reads and folds use it from
// then on, and reports whether it built one. It holds the counts' lock
// while it counts: folds wait for it (one join of the flag's users with
// the key's, about a second for a million users), and start from its
// counts. Experiment creation and the upgrade to kept counts leave such
// metrics; any instance builds them, one at a time.
func (s *Service) BuildExperimentCounts(ctx context.Context) (bool, error) {
	if pending, err := db.New(s.pool).HasUnbuiltExperimentMetric(ctx); err != nil || !pending {
		return false, err
	}
	built, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (bool, error) {
		if err := q.LockExperimentCounts(ctx); err != nil {
			return false, err
		}
		m, err := q.GetUnbuiltExperimentMetric(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil // another instance built it
		}
		if err != nil {
			return false, err
		}
		if err := q.SetMeasurementReadSettings(ctx); err != nil {
			return false, err
		}
		if err := q.ClearExperimentArmCounts(ctx, m.MetricNo); err != nil {
			return false, err
		}
		if err := q.CountExperimentArms(ctx, db.CountExperimentArmsParams{
			MetricNo: m.MetricNo, EnvironmentID: m.EnvironmentID, FlagKey: m.FlagKey, EventKey: m.EventKey,
		}); err != nil {
			return false, fmt.Errorf("count experiment arms of flag %q and event key %q: %w", m.FlagKey, m.EventKey, err)
		}
		return true, q.MarkExperimentMetricReady(ctx, m.MetricNo)
	})
	return built, store.AdaptError(err)
}
