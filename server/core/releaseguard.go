package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/notify"
)

// ReleaseGuard is what a person's flag write tells guarded releases
// (server/release), inside the write's own transaction, so that the release
// a write cancels ends with it or not at all (docs/releases.md, What
// cancels a release).
type ReleaseGuard interface {
	// LockFlagReleases locks the flag's running or paused release, if any.
	// Every path that writes a release and its flag locks the release
	// first, so a person's write and a release's check never deadlock.
	LockFlagReleases(ctx context.Context, q *db.Queries, envID uuid.UUID, key string) error
	// FlagChanged is told of the write: before and after are the flag's
	// states (after is nil for a deletion).
	FlagChanged(ctx context.Context, q *db.Queries, envID uuid.UUID, key, actor string, before, after *eval.Flag) error
}

func (s *Service) lockFlagReleases(ctx context.Context, q *db.Queries, envID uuid.UUID, key string) error {
	if s.releases == nil {
		return nil
	}
	if err := s.releases.LockFlagReleases(ctx, q, envID, key); err != nil {
		return fmt.Errorf("lock the flag's releases: %w", err)
	}
	return nil
}

func (s *Service) flagChanged(ctx context.Context, q *db.Queries, envID uuid.UUID, key, actor string, before, after *eval.Flag) error {
	if s.releases == nil {
		return nil
	}
	return s.releases.FlagChanged(ctx, q, envID, key, actor, before, after)
}

// WriteRollout sets a flag's rollout percentage (nil: everyone) for a
// system writer, guarded releases, inside the caller's transaction: the
// write path of a PATCH (lock, validate, version + 1, audit entry with
// metadata and its trail entry, whose actor is the context's,
// flag.updated), without telling the release guard. The caller publishes
// the returned event after commit.
func WriteRollout(ctx context.Context, q *db.Queries, trail *audit.Trail, envID uuid.UUID, key string, percentage *int, actor string, metadata map[string]any) (eval.Flag, bus.Event, error) {
	locked, err := lockFlag(ctx, q, trail, envID, key)
	if err != nil {
		return eval.Flag{}, bus.Event{}, err
	}
	current := locked.flag
	next := current
	next.RolloutPercentage = percentage
	if err := validateFlag(ctx, q, envID, next); err != nil {
		return eval.Flag{}, bus.Event{}, err
	}
	after, err := writeFlag(ctx, q, trail, locked, next, actor, actionUpdate, metadata)
	if err != nil {
		return eval.Flag{}, bus.Event{}, err
	}
	if err := notify.Enqueue(ctx, q, envID, notify.EventFlagUpdated, key, actor, after, &after); err != nil {
		return eval.Flag{}, bus.Event{}, err
	}
	return after, upsertEvent(after), nil
}
