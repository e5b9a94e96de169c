package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/limits"
	"github.com/switchyard/switchyard/server/store"
)

// Service starts, guards and ends guarded releases.
type Service struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
	now    func() time.Time
	bus    bus.Publisher
	trail  *audit.Trail
}

// Config holds a Service's optional settings; its zero value works.
type Config struct {
	// Trail records every write in the workspace audit trail, in the
	// write's transaction; nil records with a development key.
	Trail  *audit.Trail
	Logger *slog.Logger     // discarded when nil
	Now    func() time.Time // the clock; time.Now when nil
	Bus    bus.Publisher    // where the releases' flag writes are announced; none when nil
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	s := &Service{pool: pool, logger: cfg.Logger, now: cfg.Now, bus: cfg.Bus, trail: cfg.Trail}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

var _ core.ReleaseGuard = (*Service)(nil)

var errReleaseNotFound = apperr.E(apperr.NotFound, "release not found")

// Create starts a release of a boolean flag: the flag's rollout percentage
// becomes the first stage's through the ordinary write path, and the guard
// starts checking (docs/releases.md, Starting).
func (s *Service) Create(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string, in Input) (Release, error) {
	cfg, err := validate(in)
	if err != nil {
		return Release{}, err
	}
	var published bus.Event
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (Release, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return Release{}, err
		}
		flag, err := q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: env.ID, Key: key})
		if errors.Is(err, pgx.ErrNoRows) {
			return Release{}, apperr.E(apperr.NotFound, "flag not found")
		}
		if err != nil {
			return Release{}, fmt.Errorf("get flag: %w", err)
		}
		switch {
		case env.RequireApproval:
			return Release{}, apperr.E(apperr.Conflict, "this environment requires approval: a release cannot start in it")
		case flag.ArchivedAt != nil:
			return Release{}, apperr.E(apperr.Conflict, "the flag is archived")
		case flag.FlagType != "boolean":
			return Release{}, apperr.E(apperr.Conflict, "only boolean flags can be released")
		}
		if active, err := q.LockActiveReleases(ctx, db.LockActiveReleasesParams{EnvironmentID: env.ID, FlagKey: key}); err != nil {
			return Release{}, err
		} else if len(active) > 0 {
			return Release{}, apperr.E(apperr.Conflict, "the flag already has a running or paused release")
		}
		// Rows ingested from now on are the release's; none before its
		// start can count, so the fold starts at the current ids.
		high, err := q.GetIngestHighWater(ctx)
		if err != nil {
			return Release{}, fmt.Errorf("read ingest position: %w", err)
		}
		now := s.now().UTC()
		stages, _ := json.Marshal(in.Stages)
		metrics, _ := json.Marshal(in.Metrics)
		var createdBy *int64
		if p.Kind == auth.KindUser {
			createdBy = &p.UserID
		}
		row, err := q.InsertRelease(ctx, db.InsertReleaseParams{
			EnvironmentID: env.ID, FlagKey: key, Stages: stages, StartedAt: now, Metrics: metrics,
			Alpha: cfg.alpha, MinUsers: int32(cfg.minUsers), CheckIntervalSeconds: int32(cfg.interval),
			PreviousRolloutPercentage: flag.RolloutPercentage, CreatedBy: createdBy, CreatedByActor: p.Actor(),
			NextCheckAt:        nextCheck(now, now, cfg.interval, in.Stages[0], StatusRunning),
			ImpressionsThrough: high.Impressions, EventsThrough: high.Events,
		})
		if err != nil {
			return Release{}, store.AdaptError(err)
		}
		if err := q.InsertReleaseArmMetrics(ctx, db.InsertReleaseArmMetricsParams{ReleaseID: row.ID, MetricCount: int32(len(in.Metrics))}); err != nil {
			return Release{}, err
		}
		pct := in.Stages[0].Percentage
		if published, err = s.writeRollout(ctx, q, row, &pct); err != nil {
			return Release{}, err
		}
		rel, err := fromRow(row)
		if err != nil {
			return Release{}, err
		}
		return rel, s.record(ctx, q, nil, rel, EventStarted, p.Actor())
	})
	if err != nil {
		return Release{}, store.AdaptError(err)
	}
	s.publish(ctx, published)
	return out, nil
}

// config is a validated input with its defaults.
type config struct {
	alpha    float64
	minUsers int64
	interval int
}

// validate checks a release's input, naming every bad field in one 422
// (docs/releases.md, The API).
func validate(in Input) (config, error) {
	var p apperr.Problems
	cfg := config{alpha: defaultAlpha, minUsers: defaultMinUsers, interval: defaultInterval}
	switch n := len(in.Stages); {
	case n < 1 || n > 10:
		p.Add("stages", "must hold 1 to 10 stages")
	}
	for i, st := range in.Stages {
		f := fmt.Sprintf("stages[%d]", i)
		if st.Percentage < 1 || st.Percentage > 100 {
			p.Add(f+".percentage", "must be an integer from 1 to 100")
		} else if i > 0 && st.Percentage <= in.Stages[i-1].Percentage {
			p.Add(f+".percentage", "must be greater than the stage before")
		}
		if st.DurationSeconds < 1 || st.DurationSeconds > 2_592_000 {
			p.Add(f+".duration_seconds", "must be an integer from 1 to 2592000")
		}
	}
	if n := len(in.Metrics); n < 1 || n > 5 {
		p.Add("metrics", "must hold 1 to 5 metrics")
	}
	seen := map[string]bool{}
	for i, m := range in.Metrics {
		f := fmt.Sprintf("metrics[%d]", i)
		switch {
		case !limits.ValidKey(m.EventKey):
			p.Add(f+".event_key", "must be 1 to 100 ASCII letters, digits, underscores or hyphens")
		case seen[m.EventKey]:
			p.Add(f+".event_key", "appears twice in the release")
		}
		seen[m.EventKey] = true
		if m.Kind != KindConversion && m.Kind != KindMean {
			p.Add(f+".kind", "must be conversion or mean")
		}
		if m.BadDirection != BadIncrease && m.BadDirection != BadDecrease {
			p.Add(f+".bad_direction", "must be increase or decrease")
		}
		if math.IsNaN(m.Tolerance) || m.Tolerance < 0 || m.Tolerance > 10 {
			p.Add(f+".tolerance", "must be a number from 0 to 10")
		}
	}
	if in.Alpha != nil {
		if a := *in.Alpha; math.IsNaN(a) || a <= 0 || a > 0.5 {
			p.Add("alpha", "must be greater than 0 and at most 0.5")
		}
		cfg.alpha = *in.Alpha
	}
	if in.MinUsers != nil {
		if *in.MinUsers < 1 || *in.MinUsers > math.MaxInt32 {
			p.Add("min_users", "must be an integer of at least 1")
		}
		cfg.minUsers = *in.MinUsers
	}
	if in.CheckIntervalSeconds != nil {
		if *in.CheckIntervalSeconds < 1 || *in.CheckIntervalSeconds > 86_400 {
			p.Add("check_interval_seconds", "must be an integer from 1 to 86400")
		}
		cfg.interval = *in.CheckIntervalSeconds
	}
	return cfg, p.Err()
}

// nextCheck is when a release's next check is due: after the check
// interval, or at the stage's end if that comes first while running.
func nextCheck(now, stageStarted time.Time, interval int, stage Stage, status string) time.Time {
	next := now.Add(time.Duration(interval) * time.Second)
	if status == StatusRunning {
		if end := stageStarted.Add(time.Duration(stage.DurationSeconds) * time.Second); end.Before(next) {
			next = end
		}
	}
	return next
}

// writeMetadata is the audit metadata of a release's own flag writes.
func writeMetadata(id uuid.UUID) map[string]any {
	return map[string]any{"source": "release", "release_id": id.String()}
}

// List returns an environment's releases, newest first; status and
// flagKey filter when set.
func (s *Service) List(ctx context.Context, p *auth.Principal, envID uuid.UUID, status, flagKey *string) ([]Release, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	rows, err := q.ListReleases(ctx, db.ListReleasesParams{EnvironmentID: envID, Status: status, FlagKey: flagKey})
	if err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	out := make([]Release, 0, len(rows))
	for _, r := range rows {
		rel, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

// Get returns one release of the environment.
func (s *Service) Get(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) (Release, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return Release{}, err
	}
	row, err := q.GetRelease(ctx, db.GetReleaseParams{ID: id, EnvironmentID: envID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Release{}, errReleaseNotFound
	}
	if err != nil {
		return Release{}, fmt.Errorf("get release: %w", err)
	}
	return fromRow(row)
}

// Checks returns every check of a release, oldest first.
func (s *Service) Checks(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) ([]Analysis, error) {
	if _, err := s.Get(ctx, p, envID, id); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).ListReleaseChecks(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("list release checks: %w", err)
	}
	out := make([]Analysis, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, fmt.Errorf("decode release check: %w", err)
		}
	}
	return out, nil
}

// ListActiveFlagKeys returns the keys of the environment's flags with a
// running or paused release.
func (s *Service) ListActiveFlagKeys(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]string, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	return q.ListActiveReleaseFlagKeys(ctx, envID)
}

// Actions a person may take on a release.
const (
	ActionPause    = "pause"
	ActionResume   = "resume"
	ActionRollback = "rollback"
	ActionCancel   = "cancel"
)

// Act pauses, resumes, rolls back or cancels a release: 409 when its status
// does not allow it (only running pauses; only paused resumes; running or
// paused roll back or cancel).
func (s *Service) Act(ctx context.Context, p *auth.Principal, envID, id uuid.UUID, action string) (Release, error) {
	var published []bus.Event
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (Release, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return Release{}, err
		}
		row, err := q.LockRelease(ctx, db.LockReleaseParams{ID: id, EnvironmentID: env.ID})
		if errors.Is(err, pgx.ErrNoRows) {
			return Release{}, errReleaseNotFound
		}
		if err != nil {
			return Release{}, fmt.Errorf("lock release: %w", err)
		}
		rel, err := fromRow(row)
		if err != nil {
			return Release{}, err
		}
		active := rel.Status == StatusRunning || rel.Status == StatusPaused
		now := s.now().UTC()
		st := state{row: row, rel: rel, now: now}
		switch {
		case action == ActionPause && rel.Status == StatusRunning:
			return st.pause(ctx, s, q, "paused by "+p.Actor(), p.Actor())
		case action == ActionResume && rel.Status == StatusPaused:
			return st.resume(ctx, s, q, p.Actor())
		case action == ActionRollback && active:
			out, ev, err := st.rollback(ctx, s, q, "rolled back by "+p.Actor(), p.Actor())
			published = append(published, ev)
			return out, err
		case action == ActionCancel && active:
			return st.end(ctx, s, q, StatusCancelled, "cancelled by "+p.Actor(), p.Actor())
		}
		return Release{}, apperr.Ef(apperr.Conflict, "a %s release cannot %s", rel.Status, action)
	})
	if err != nil {
		return Release{}, store.AdaptError(err)
	}
	s.publish(ctx, published...)
	return out, nil
}

// publish announces committed changes (bus.PublishCommitted).
func (s *Service) publish(ctx context.Context, events ...bus.Event) {
	bus.PublishCommitted(ctx, s.bus, s.logger, events...)
}
