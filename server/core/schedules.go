package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/notify"
	"github.com/switchyard/switchyard/server/store"
)

// scheduled_at more than 30 seconds in the past is rejected; a failed
// change is retried no earlier than 60 seconds later
// (docs/reference/flags.md, Scheduled changes).
const (
	schedulePastTolerance = 30 * time.Second
	scheduleRetryDelay    = 60 * time.Second
)

// ListScheduledChanges returns an environment's scheduled changes, or one
// flag's when key is set, ordered by scheduled_at; executed ones stay listed.
func (s *Service) ListScheduledChanges(ctx context.Context, p *auth.Principal, envID uuid.UUID, key *string) ([]db.ScheduledChange, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	out, err := q.ListScheduledChanges(ctx, db.ListScheduledChangesParams{EnvironmentID: envID, FlagKey: key})
	if err != nil {
		return nil, fmt.Errorf("list scheduled changes: %w", err)
	}
	return out, nil
}

// CreateScheduledChange schedules a merge patch of a flag (editor or
// above). The patch is validated against the current flag; a missing flag
// is 404, an environment requiring approval 409, scheduled_at more than 30 s
// in the past 422 (docs/reference/flags.md, Scheduled changes).
func (s *Service) CreateScheduledChange(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string, at time.Time, patch json.RawMessage) (db.ScheduledChange, error) {
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.ScheduledChange, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return db.ScheduledChange{}, err
		}
		row, err := q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: env.ID, Key: key})
		if errors.Is(err, pgx.ErrNoRows) {
			return db.ScheduledChange{}, errFlagNotFound
		}
		if err != nil {
			return db.ScheduledChange{}, err
		}
		if env.RequireApproval {
			return db.ScheduledChange{}, errApprovalRequired("scheduling a change")
		}
		if at.Before(s.now().Add(-schedulePastTolerance)) {
			return db.ScheduledChange{}, apperr.Field("scheduled_at", "is more than 30 seconds in the past")
		}
		current, err := flagFromRow(row)
		if err != nil {
			return db.ScheduledChange{}, err
		}
		if _, err := applyFlagPatch(ctx, q, env.ID, current, patch); err != nil {
			return db.ScheduledChange{}, asPatchField(err)
		}
		sc, err := q.InsertScheduledChange(ctx, db.InsertScheduledChangeParams{
			EnvironmentID: env.ID, FlagKey: key, ScheduledAt: at.UTC(), Patch: patch, CreatedBy: p.Actor(),
		})
		if err != nil {
			return db.ScheduledChange{}, err
		}
		return sc, s.recordSchedule(ctx, q, "schedule.created", nil, &sc)
	})
	return out, store.AdaptError(err)
}

// asPatchField reports a patch that does not apply as invalid input (422).
func asPatchField(err error) error {
	if apperr.KindOf(err) == apperr.BadRequest {
		return apperr.Wrap(apperr.Invalid, "patch: not a valid merge patch", err)
	}
	return err
}

// DeleteScheduledChange removes a pending scheduled change; an executed or
// missing one is 404 (docs/reference/flags.md, Scheduled changes).
func (s *Service) DeleteScheduledChange(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) error {
	return store.AdaptError(store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		if _, err := access.Env(ctx, q, p, envID, access.Write); err != nil {
			return err
		}
		sc, err := q.DeletePendingScheduledChange(ctx, db.DeletePendingScheduledChangeParams{EnvironmentID: envID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.E(apperr.NotFound, "scheduled change not found")
		}
		if err != nil {
			return err
		}
		return s.recordSchedule(ctx, q, "schedule.deleted", &sc, nil)
	}))
}

// RunScheduledChange applies one due scheduled change, if there is one,
// and reports whether it found one. The change is claimed with FOR UPDATE
// SKIP LOCKED, so several instances running the worker apply each change
// exactly once. It takes the write path of a PATCH (lock, applyFlagPatch,
// version, audit with source "schedule", stream update, flag.updated).
// A failure increments attempts, records last_error and retries no earlier
// than 60 s later; a success clears last_error; while the environment
// requires approval the change waits (docs/reference/flags.md, Scheduled
// changes).
func (s *Service) RunScheduledChange(ctx context.Context) (bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	q := db.New(tx)
	now := s.now()
	sc, err := q.ClaimDueScheduledChange(ctx, now)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim scheduled change: %w", err)
	}
	// What the change writes is the schedule's, in the trail: the flag's
	// update, a release it cancels, its own new state.
	ctx = audit.WithActor(ctx, scheduleActor(sc))
	// The apply runs in a savepoint: when it fails, its writes are undone
	// and the failure is recorded while the claim (the row lock) is held.
	sp, err := tx.Begin(ctx)
	if err != nil {
		return true, fmt.Errorf("savepoint: %w", err)
	}
	after, applyErr := s.applyScheduledChange(ctx, db.New(sp), sc)
	if applyErr == nil {
		applyErr = sp.Commit(ctx)
	}
	if applyErr != nil {
		_ = sp.Rollback(ctx)
		msg := apperr.KindOf(applyErr).String() + ": " + safeMessage(applyErr)
		failed, err := q.MarkScheduledChangeFailed(ctx, db.MarkScheduledChangeFailedParams{
			ID: sc.ID, LastError: &msg, NextAttemptAt: now.Add(scheduleRetryDelay),
		})
		if err != nil {
			return true, fmt.Errorf("record scheduled change failure: %w", err)
		}
		// A change that keeps failing the same way is retried every minute,
		// for ever: the trail has its first failure and each new cause, not
		// every retry.
		if sc.LastError == nil || *sc.LastError != msg {
			if err := s.recordSchedule(ctx, q, "schedule.updated", &sc, &failed); err != nil {
				return true, err
			}
		}
		s.logger.WarnContext(ctx, "scheduled change failed", "id", sc.ID.String(), "env_id", sc.EnvironmentID.String(),
			"flag_key", sc.FlagKey, "attempt", sc.Attempts+1, "err", applyErr.Error())
	} else {
		executed, err := q.MarkScheduledChangeExecuted(ctx, db.MarkScheduledChangeExecutedParams{ID: sc.ID, ExecutedAt: &now})
		if err != nil {
			return true, fmt.Errorf("mark scheduled change executed: %w", err)
		}
		if err := s.recordSchedule(ctx, q, "schedule.updated", &sc, &executed); err != nil {
			return true, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return true, fmt.Errorf("commit scheduled change: %w", err)
	}
	if applyErr == nil {
		s.publish(ctx, upsertEvent(after))
	}
	return true, nil
}

// applyScheduledChange writes a scheduled change's patch over the flag's
// current state.
func (s *Service) applyScheduledChange(ctx context.Context, q *db.Queries, sc db.ScheduledChange) (eval.Flag, error) {
	if err := s.lockFlagReleases(ctx, q, sc.EnvironmentID, sc.FlagKey); err != nil {
		return eval.Flag{}, err
	}
	locked, err := lockFlag(ctx, q, s.trail, sc.EnvironmentID, sc.FlagKey)
	if err != nil {
		return eval.Flag{}, err
	}
	current := locked.flag
	next, err := applyFlagPatch(ctx, q, sc.EnvironmentID, current, sc.Patch)
	if err != nil {
		return eval.Flag{}, err
	}
	meta := map[string]any{"source": SourceSchedule, "scheduled_change_id": sc.ID.String()}
	after, err := writeFlag(ctx, q, s.trail, locked, next, sc.CreatedBy, actionUpdate, meta)
	if err != nil {
		return eval.Flag{}, err
	}
	if err := s.flagChanged(ctx, q, sc.EnvironmentID, sc.FlagKey, sc.CreatedBy, &current, &after); err != nil {
		return eval.Flag{}, err
	}
	return after, notify.Enqueue(ctx, q, sc.EnvironmentID, notify.EventFlagUpdated, sc.FlagKey, sc.CreatedBy, after, &after)
}

// scheduleActor is the trail's actor of what a scheduled change writes
// when it is applied: the change, and its author (an email, or an SDK
// key's actor name).
func scheduleActor(sc db.ScheduledChange) audit.Actor {
	a := audit.Actor{Kind: audit.ActorSchedule, ID: audit.Str(sc.ID.String())}
	if strings.HasPrefix(sc.CreatedBy, sdkActorPrefix) {
		a.Label = audit.Str(sc.CreatedBy)
	} else {
		a.Email = audit.Str(sc.CreatedBy)
	}
	return a
}

// recordSchedule appends a scheduled change's change to the audit trail,
// its states the scheduled change as the API shows it (either nil).
func (s *Service) recordSchedule(ctx context.Context, q *db.Queries, action string, before, after *db.ScheduledChange) error {
	sc := cmp.Or(after, before)
	return recordInEnv(ctx, q, s.trail, sc.EnvironmentID, audit.Change{
		Action:   action,
		Resource: audit.Resource{Type: audit.Schedule, ID: sc.ID.String(), Key: audit.Str(sc.FlagKey)},
		Before:   scheduleData(before), After: scheduleData(after),
	})
}

// scheduleData is a scheduled change as the API shows it; none for nil.
func scheduleData(sc *db.ScheduledChange) any {
	if sc == nil {
		return nil
	}
	return map[string]any{
		"id": sc.ID, "environment_id": sc.EnvironmentID, "flag_key": sc.FlagKey, "scheduled_at": sc.ScheduledAt,
		"patch": sc.Patch, "executed_at": sc.ExecutedAt, "attempts": sc.Attempts, "last_error": sc.LastError,
		"created_at": sc.CreatedAt,
	}
}

// safeMessage is the client-safe text of err: an apperr message, or a
// generic one for internal faults (their detail goes to the log only).
func safeMessage(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) && e.Kind != apperr.Internal && e.Message != "" {
		return e.Message
	}
	return "internal error"
}
