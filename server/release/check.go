package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/stats"
	"github.com/switchyard/switchyard/server/store"
)

// RunReleaseCheck runs the check of one release that is due, if there is
// one, and reports whether it found one (docs/releases.md, What a check
// does). The release's row stays locked until the check commits: several
// instances never run the same check, and a crash undoes a check whole.
func (s *Service) RunReleaseCheck(ctx context.Context) (bool, error) {
	due, err := db.New(s.pool).HasDueRelease(ctx, s.now().UTC())
	if err != nil || !due {
		return false, err
	}
	// Every ingest acknowledged before this point is committed at or below
	// these ids; later ones draw larger ids and wait for the next check.
	high, err := s.ingestBarrier(ctx)
	if err != nil {
		return false, err
	}
	var published []bus.Event
	found, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (bool, error) {
		published = published[:0]
		now := s.now().UTC()
		row, err := q.ClaimDueRelease(ctx, now)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("claim release: %w", err)
		}
		// What a check decides is the release guard's own doing.
		ev, err := s.check(audit.WithActor(ctx, releaseActor(row)), q, row, high, now)
		if err != nil {
			return true, fmt.Errorf("check release %s: %w", row.ID, err)
		}
		published = append(published, ev)
		return true, nil
	})
	if err != nil {
		return found, err
	}
	s.publish(ctx, published...)
	return found, nil
}

// ingestBarrier waits until every ingest in flight has committed and
// returns the largest committed ids.
func (s *Service) ingestBarrier(ctx context.Context) (db.GetIngestHighWaterRow, error) {
	h, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.GetIngestHighWaterRow, error) {
		if err := q.LockIngestExclusive(ctx); err != nil {
			return db.GetIngestHighWaterRow{}, err
		}
		// A new statement, so a new snapshot: it sees every ingest the
		// lock waited for.
		return q.GetIngestHighWater(ctx)
	})
	if err != nil {
		return h, fmt.Errorf("ingest barrier: %w", err)
	}
	return h, nil
}

// check folds what arrived since the last check, analyses the release,
// records the analysis and acts on it: roll back, pause, advance, or wait
// for the next check.
func (s *Service) check(ctx context.Context, q *db.Queries, row db.Release, high db.GetIngestHighWaterRow, now time.Time) (bus.Event, error) {
	rel, err := fromRow(row)
	if err != nil {
		return bus.Event{}, err
	}
	f := folder{q: q, row: row, rel: rel}
	if err := f.fold(ctx, high); err != nil {
		return bus.Event{}, err
	}
	analysis, err := f.analyse(ctx, now)
	if err != nil {
		return bus.Event{}, err
	}
	encoded, err := json.Marshal(analysis)
	if err != nil {
		return bus.Event{}, err
	}
	row, err = q.RecordReleaseCheck(ctx, db.RecordReleaseCheckParams{
		ID: row.ID, Analysis: encoded, ImpressionsThrough: f.row.ImpressionsThrough, EventsThrough: f.row.EventsThrough,
		TreatmentUsers: f.row.TreatmentUsers, ControlUsers: f.row.ControlUsers,
		StageTreatmentUsers: f.row.StageTreatmentUsers, StageControlUsers: f.row.StageControlUsers, Now: now,
	})
	if err != nil {
		return bus.Event{}, fmt.Errorf("record check: %w", err)
	}
	if err := q.InsertReleaseCheck(ctx, db.InsertReleaseCheckParams{ReleaseID: row.ID, CheckedAt: now, Analysis: encoded}); err != nil {
		return bus.Event{}, fmt.Errorf("record check: %w", err)
	}
	if rel, err = fromRow(row); err != nil {
		return bus.Event{}, err
	}
	st := state{row: row, rel: rel, now: now}
	actor := row.CreatedByActor
	// The order of decisions: a regression rolls back whether running or
	// paused; a sample-ratio mismatch pauses a running release; a stage
	// that has run its time advances.
	for _, m := range analysis.Metrics {
		if m.Regressed {
			_, ev, err := st.rollback(ctx, s, q, regressionReason(m), actor)
			return ev, err
		}
	}
	if rel.Status == StatusRunning && analysis.SRM != nil && analysis.SRM.Mismatch {
		_, err := st.pause(ctx, s, q, srmReason(*analysis.SRM), actor)
		return bus.Event{}, err
	}
	stage := rel.Stages[rel.StageIndex]
	if rel.Status == StatusRunning && !now.Before(rel.StageStartedAt.Add(time.Duration(stage.DurationSeconds)*time.Second)) {
		_, ev, err := st.advance(ctx, s, q)
		return ev, err
	}
	p := st.params()
	p.ID, p.Now = row.ID, now
	p.NextCheckAt = nextCheck(now, row.StageStartedAt, rel.CheckIntervalSeconds, stage, rel.Status)
	if _, err := q.UpdateReleaseState(ctx, p); err != nil {
		return bus.Event{}, fmt.Errorf("schedule next check: %w", err)
	}
	return bus.Event{}, nil
}

func regressionReason(m MetricAnalysis) string {
	return fmt.Sprintf("%s regressed: lift %+.2f%% (interval %+.2f%% to %+.2f%%), %s beyond the tolerance of %.2f%%",
		m.EventKey, 100**m.Lift, 100**m.CILower, 100**m.CIUpper, direction(m.BadDirection), 100*m.Tolerance)
}

func direction(bad string) string {
	if bad == BadDecrease {
		return "down"
	}
	return "up"
}

func srmReason(r SampleRatio) string {
	return fmt.Sprintf("sample ratio mismatch: %d of %d users first exposed in this stage got the change, against an expected share of %.4g%% (p = %.3g)",
		r.TreatmentUsers, r.Users, 100*r.ExpectedShare, r.PValue)
}

// folder brings a release's per-user state and per-arm sums up to date.
type folder struct {
	q   *db.Queries
	row db.Release // its fold state moves as it folds
	rel Release
}

func (f *folder) eventKeys() []string {
	keys := make([]string, len(f.rel.Metrics))
	for i, m := range f.rel.Metrics {
		keys[i] = m.EventKey
	}
	return keys
}

// fold takes in the goal events and impressions ingested since the last
// check, up to high: first the events of the users already known (each
// counts if at or after that user's first exposure), then the first
// exposures, whose users' state is computed from all their events so far.
// Its cost follows the rows that arrived and the users they name, not the
// release's size (docs/architecture.md, Guarded releases).
func (f *folder) fold(ctx context.Context, high db.GetIngestHighWaterRow) error {
	r := &f.row
	keys := f.eventKeys()
	if high.Events > r.EventsThrough {
		if err := f.q.FoldReleaseEvents(ctx, db.FoldReleaseEventsParams{
			EventKeys: keys, ReleaseID: r.ID, AfterID: r.EventsThrough, ThroughID: high.Events, EnvironmentID: r.EnvironmentID,
		}); err != nil {
			return fmt.Errorf("fold goal events: %w", err)
		}
		r.EventsThrough = high.Events
	}
	if high.Impressions <= r.ImpressionsThrough {
		return nil
	}
	changes, err := f.q.ListReleaseExposureChanges(ctx, db.ListReleaseExposureChangesParams{
		EnvironmentID: r.EnvironmentID, FlagKey: r.FlagKey, AfterID: r.ImpressionsThrough, ThroughID: high.Impressions,
		StartedAt: r.StartedAt, ReleaseID: r.ID,
	})
	if err != nil {
		return fmt.Errorf("read first exposures: %w", err)
	}
	r.ImpressionsThrough = high.Impressions
	if len(changes) == 0 {
		return nil
	}
	var known []string
	ids := make([]string, len(changes))
	arms := make([]bool, len(changes))
	at := make([]time.Time, len(changes))
	for i, c := range changes {
		ids[i], arms[i], at[i] = c.UserID, c.Treatment, c.EvaluatedAt
		if c.OldTreatment != nil { // exposed earlier than the release knew: move the user
			known = append(known, c.UserID)
			f.count(*c.OldTreatment, *c.OldExposedAt, -1)
		}
		f.count(c.Treatment, c.EvaluatedAt, +1)
	}
	if len(known) > 0 {
		if err := f.q.RemoveReleaseUserMetrics(ctx, db.RemoveReleaseUserMetricsParams{ReleaseID: r.ID, UserIds: known}); err != nil {
			return fmt.Errorf("take moved users out: %w", err)
		}
	}
	if err := f.q.UpsertReleaseUsers(ctx, db.UpsertReleaseUsersParams{ReleaseID: r.ID, UserIds: ids, Treatments: arms, ExposedAts: at}); err != nil {
		return fmt.Errorf("store first exposures: %w", err)
	}
	if err := f.q.AddReleaseUserMetrics(ctx, db.AddReleaseUserMetricsParams{
		EventKeys: keys, EnvironmentID: r.EnvironmentID, ThroughID: r.EventsThrough, ReleaseID: r.ID,
		UserIds: ids, Treatments: arms, ExposedAts: at,
	}); err != nil {
		return fmt.Errorf("fold new users' goal events: %w", err)
	}
	return nil
}

// count adds (or, with -1, removes) a user to the arm's counters, and to
// the stage's when first exposed in the current stage.
func (f *folder) count(treatment bool, exposed time.Time, delta int64) {
	r := &f.row
	inStage := !exposed.Before(r.StageStartedAt)
	if treatment {
		r.TreatmentUsers += delta
		if inStage {
			r.StageTreatmentUsers += delta
		}
	} else {
		r.ControlUsers += delta
		if inStage {
			r.StageControlUsers += delta
		}
	}
}

// analyse computes the check from the arms' sums.
func (f *folder) analyse(ctx context.Context, now time.Time) (Analysis, error) {
	r, rel := f.row, f.rel
	a := Analysis{
		CheckedAt: now, StageIndex: rel.StageIndex, Percentage: rel.Stages[rel.StageIndex].Percentage,
		TreatmentUsers: r.TreatmentUsers, ControlUsers: r.ControlUsers, Metrics: []MetricAnalysis{},
	}
	sums, err := f.q.ListReleaseArmMetrics(ctx, r.ID)
	if err != nil {
		return Analysis{}, fmt.Errorf("read arm sums: %w", err)
	}
	byArm := map[[2]int]db.ReleaseArmMetric{}
	for _, s := range sums {
		arm := 0
		if s.Treatment {
			arm = 1
		}
		byArm[[2]int{int(s.Metric), arm}] = s
	}
	for i, m := range rel.Metrics {
		t := summarise(m.Kind, r.TreatmentUsers, byArm[[2]int{i + 1, 1}])
		c := summarise(m.Kind, r.ControlUsers, byArm[[2]int{i + 1, 0}])
		seq := stats.CompareSequential(t, c, rel.Alpha)
		ma := MetricAnalysis{
			EventKey: m.EventKey, Kind: m.Kind, BadDirection: m.BadDirection, Tolerance: m.Tolerance,
			Treatment: ArmSummary{Users: t.Users, Mean: t.Mean, Variance: t.Variance},
			Control:   ArmSummary{Users: c.Users, Mean: c.Mean, Variance: c.Variance},
			Lift:      seq.Lift, CILower: seq.Lower, CIUpper: seq.Upper, PValue: seq.P,
		}
		ma.Regressed = seq.Regressed(stats.Direction(m.BadDirection), m.Tolerance, rel.MinUsers)
		a.Metrics = append(a.Metrics, ma)
	}
	if a.Percentage < 100 {
		plain, err := f.plainFlag(ctx)
		if err != nil {
			return Analysis{}, err
		}
		if plain {
			srm := stats.CheckSampleRatio(r.StageTreatmentUsers, r.StageControlUsers, float64(a.Percentage)/100, rel.MinUsers)
			a.SRM = &SampleRatio{
				Users: srm.Users, TreatmentUsers: srm.TreatmentUsers, ExpectedShare: srm.ExpectedShare,
				PValue: srm.P, Mismatch: srm.Mismatch,
			}
		}
	}
	return a, nil
}

// summarise is one arm of one metric: n users, and the mean and variance
// of their values (a conversion is 1 for a user with an event, else 0; a
// mean metric is the sum of a user's event values).
func summarise(kind string, users int64, s db.ReleaseArmMetric) stats.Summary {
	if kind == KindConversion {
		return stats.ConversionSummary(users, s.Converted)
	}
	return stats.MeanSummary(users, s.Total, s.TotalSq)
}

// plainFlag reports whether the flag has no rules and no prerequisites:
// only then does the rollout alone decide who gets the change, and the
// sample-ratio check apply.
func (f *folder) plainFlag(ctx context.Context) (bool, error) {
	flag, err := f.q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: f.row.EnvironmentID, Key: f.row.FlagKey})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read flag: %w", err)
	}
	var rules, prereqs []json.RawMessage
	_ = json.Unmarshal(flag.Rules, &rules)
	_ = json.Unmarshal(flag.Prerequisites, &prereqs)
	return len(rules) == 0 && len(prereqs) == 0, nil
}
