package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/notify"
)

// The release events, notified to webhooks and chat integrations and
// written to the audit log (docs/releases.md, Events).
const (
	EventStarted    = notify.EventReleaseStarted
	EventAdvanced   = notify.EventReleaseAdvanced
	EventPaused     = notify.EventReleasePaused
	EventResumed    = notify.EventReleaseResumed
	EventRolledBack = notify.EventReleaseRolledBack
	EventCompleted  = notify.EventReleaseCompleted
	EventCancelled  = notify.EventReleaseCancelled
)

// state is a locked release on its way to a new status.
type state struct {
	row db.Release
	rel Release
	now time.Time
}

// save writes the release's new state and records its event.
func (st state) save(ctx context.Context, s *Service, q *db.Queries, p db.UpdateReleaseStateParams, event, actor string) (Release, error) {
	p.ID, p.Now = st.row.ID, st.now
	row, err := q.UpdateReleaseState(ctx, p)
	if err != nil {
		return Release{}, fmt.Errorf("update release: %w", err)
	}
	rel, err := fromRow(row)
	if err != nil {
		return Release{}, err
	}
	return rel, s.record(ctx, q, &st.rel, rel, event, actor)
}

// params are the release's current state, to change from.
func (st state) params() db.UpdateReleaseStateParams {
	r := st.row
	return db.UpdateReleaseStateParams{
		Status: r.Status, StageIndex: r.StageIndex, StageStartedAt: r.StageStartedAt, Reason: r.Reason,
		EndedAt: r.EndedAt, NextCheckAt: r.NextCheckAt,
		StageTreatmentUsers: r.StageTreatmentUsers, StageControlUsers: r.StageControlUsers,
	}
}

// pause keeps the percentage and keeps guarding.
func (st state) pause(ctx context.Context, s *Service, q *db.Queries, reason, actor string) (Release, error) {
	p := st.params()
	p.Status, p.Reason = StatusPaused, &reason
	p.NextCheckAt = nextCheck(st.now, st.row.StageStartedAt, st.rel.CheckIntervalSeconds, st.rel.Stages[st.rel.StageIndex], StatusPaused)
	return st.save(ctx, s, q, p, EventPaused, actor)
}

// resume continues the current stage from now.
func (st state) resume(ctx context.Context, s *Service, q *db.Queries, actor string) (Release, error) {
	p := st.params()
	p.Status, p.Reason, p.StageStartedAt = StatusRunning, nil, st.now
	if err := st.restartStageCounts(ctx, q, &p); err != nil {
		return Release{}, err
	}
	p.NextCheckAt = nextCheck(st.now, st.now, st.rel.CheckIntervalSeconds, st.rel.Stages[st.rel.StageIndex], StatusRunning)
	return st.save(ctx, s, q, p, EventResumed, actor)
}

// restartStageCounts counts the users first exposed since p's stage start:
// the sample-ratio check looks at the current stage only.
func (st state) restartStageCounts(ctx context.Context, q *db.Queries, p *db.UpdateReleaseStateParams) error {
	n, err := q.CountReleaseStageUsers(ctx, db.CountReleaseStageUsersParams{ReleaseID: st.row.ID, Since: p.StageStartedAt})
	if err != nil {
		return fmt.Errorf("count stage users: %w", err)
	}
	p.StageTreatmentUsers, p.StageControlUsers = n.Treatment, n.Control
	return nil
}

// advance moves to the next stage, writing its percentage, or completes
// the release after the last one (the flag stays as it is).
func (st state) advance(ctx context.Context, s *Service, q *db.Queries) (Release, bus.Event, error) {
	p := st.params()
	actor := st.row.CreatedByActor
	if st.rel.StageIndex+1 >= len(st.rel.Stages) {
		p.Status, p.EndedAt = StatusCompleted, &st.now
		rel, err := st.save(ctx, s, q, p, EventCompleted, actor)
		return rel, bus.Event{}, err
	}
	p.StageIndex++
	p.StageStartedAt = st.now
	if err := st.restartStageCounts(ctx, q, &p); err != nil {
		return Release{}, bus.Event{}, err
	}
	stage := st.rel.Stages[p.StageIndex]
	p.NextCheckAt = nextCheck(st.now, st.now, st.rel.CheckIntervalSeconds, stage, StatusRunning)
	pct := stage.Percentage
	ev, err := s.writeRollout(ctx, q, st.row, &pct)
	if err != nil {
		return Release{}, bus.Event{}, err
	}
	rel, err := st.save(ctx, s, q, p, EventAdvanced, actor)
	return rel, ev, err
}

// rollback sets the flag's rollout percentage to 0 and ends the release.
func (st state) rollback(ctx context.Context, s *Service, q *db.Queries, reason, actor string) (Release, bus.Event, error) {
	zero := 0
	ev, err := s.writeRollout(ctx, q, st.row, &zero)
	if err != nil {
		return Release{}, bus.Event{}, err
	}
	rel, err := st.end(ctx, s, q, StatusRolledBack, reason, actor)
	return rel, ev, err
}

// end stops guarding: rolled back, or cancelled (the flag left as it is).
func (st state) end(ctx context.Context, s *Service, q *db.Queries, status, reason, actor string) (Release, error) {
	p := st.params()
	p.Status, p.Reason, p.EndedAt = status, &reason, &st.now
	event := EventCancelled
	if status == StatusRolledBack {
		event = EventRolledBack
	}
	return st.save(ctx, s, q, p, event, actor)
}

// writeRollout is a release's own write of its flag's rollout percentage:
// in the environment's log by the release's creator with the release's
// id, in the audit trail by the release.
func (s *Service) writeRollout(ctx context.Context, q *db.Queries, row db.Release, pct *int) (bus.Event, error) {
	ctx = audit.WithActor(ctx, releaseActor(row))
	_, ev, err := core.WriteRollout(ctx, q, s.trail, row.EnvironmentID, row.FlagKey, pct, row.CreatedByActor, writeMetadata(row.ID))
	return ev, err
}

// releaseActor is the trail's actor of what the release guard does itself.
func releaseActor(row db.Release) audit.Actor {
	return audit.Actor{Kind: audit.ActorRelease, ID: audit.Str(row.ID.String()), Label: audit.Str(row.FlagKey)}
}

// record notifies a release event to the environment's webhooks and chat
// integrations, carrying the release, and appends it to the environment's
// audit log and to the workspace audit trail (its actor the context's:
// the person who acted, or the release guard). before is the release
// before the event, nil for its start.
func (s *Service) record(ctx context.Context, q *db.Queries, before *Release, rel Release, event, actor string) error {
	flag, err := currentFlag(ctx, q, rel.EnvironmentID, rel.FlagKey)
	if err != nil {
		return err
	}
	if err := notify.Enqueue(ctx, q, rel.EnvironmentID, event, rel.FlagKey, actor, rel, flag); err != nil {
		return err
	}
	after, err := json.Marshal(rel)
	if err != nil {
		return err
	}
	meta, _ := json.Marshal(map[string]any{"source": "release", "release_id": rel.ID.String()})
	if err := q.InsertAuditEntry(ctx, db.InsertAuditEntryParams{
		EnvironmentID: rel.EnvironmentID, FlagKey: rel.FlagKey, ActorEmail: actor, Action: event,
		AfterData: after, Metadata: meta,
	}); err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	env, err := q.GetEnvironment(ctx, rel.EnvironmentID)
	if err != nil {
		return fmt.Errorf("audit %s: read environment: %w", event, err)
	}
	c := audit.Change{
		Action:    event,
		Resource:  audit.Resource{Type: audit.Release, ID: rel.ID.String(), Key: audit.Str(rel.FlagKey)},
		ProjectID: audit.ID(env.ProjectID), EnvironmentID: audit.ID(env.ID), After: rel,
	}
	if before != nil {
		c.Before = *before
	}
	return s.trail.Record(ctx, q, c)
}

// currentFlag is the flag's enabled state and rollout for a notification,
// or nil once it is deleted.
func currentFlag(ctx context.Context, q *db.Queries, envID uuid.UUID, key string) (*eval.Flag, error) {
	row, err := q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: envID, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil // a deleted flag has no state to show
	}
	if err != nil {
		return nil, fmt.Errorf("read flag: %w", err)
	}
	f := eval.Flag{Key: row.Key, IsEnabled: row.IsEnabled}
	if row.RolloutPercentage != nil {
		p := int(*row.RolloutPercentage)
		f.RolloutPercentage = &p
	}
	return &f, nil
}

// LockFlagReleases locks the flag's running or paused release, if any
// (core.ReleaseGuard).
func (s *Service) LockFlagReleases(ctx context.Context, q *db.Queries, envID uuid.UUID, key string) error {
	_, err := q.LockActiveReleases(ctx, db.LockActiveReleasesParams{EnvironmentID: envID, FlagKey: key})
	return err
}

// FlagChanged cancels the flag's running or paused release when a person
// changed what the release guards: the rollout percentage, enablement,
// rules, variants or prerequisites, or archived or deleted the flag
// (core.ReleaseGuard; docs/releases.md, What cancels a release).
func (s *Service) FlagChanged(ctx context.Context, q *db.Queries, envID uuid.UUID, key, actor string, before, after *eval.Flag) error {
	if after != nil && !guardedChange(before, after) {
		return nil
	}
	rows, err := q.LockActiveReleases(ctx, db.LockActiveReleasesParams{EnvironmentID: envID, FlagKey: key})
	if err != nil {
		return err
	}
	for _, row := range rows {
		rel, err := fromRow(row)
		if err != nil {
			return err
		}
		st := state{row: row, rel: rel, now: s.now().UTC()}
		if _, err := st.end(ctx, s, q, StatusCancelled, "flag changed by "+actor, actor); err != nil {
			return err
		}
	}
	return nil
}

// guardedChange reports whether a write changed what a release guards.
func guardedChange(before, after *eval.Flag) bool {
	if before == nil {
		return false
	}
	if (before.ArchivedAt == nil) != (after.ArchivedAt == nil) || before.IsEnabled != after.IsEnabled {
		return true
	}
	if (before.RolloutPercentage == nil) != (after.RolloutPercentage == nil) ||
		(before.RolloutPercentage != nil && *before.RolloutPercentage != *after.RolloutPercentage) {
		return true
	}
	return !sameJSON(before.Rules, after.Rules) || !sameJSON(before.Variants, after.Variants) ||
		!sameJSON(before.Prerequisites, after.Prerequisites)
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
