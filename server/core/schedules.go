package core

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
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
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
		return q.InsertScheduledChange(ctx, db.InsertScheduledChangeParams{
			EnvironmentID: env.ID, FlagKey: key, ScheduledAt: at.UTC(), Patch: patch, CreatedBy: p.Actor(),
		})
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
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Write); err != nil {
		return err
	}
	n, err := q.DeletePendingScheduledChange(ctx, db.DeletePendingScheduledChangeParams{EnvironmentID: envID, ID: id})
	if err != nil {
		return store.AdaptError(err)
	}
	if n == 0 {
		return apperr.E(apperr.NotFound, "scheduled change not found")
	}
	return nil
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
		if err := q.MarkScheduledChangeFailed(ctx, db.MarkScheduledChangeFailedParams{
			ID: sc.ID, LastError: &msg, NextAttemptAt: now.Add(scheduleRetryDelay),
		}); err != nil {
			return true, fmt.Errorf("record scheduled change failure: %w", err)
		}
		s.logger.WarnContext(ctx, "scheduled change failed", "id", sc.ID.String(), "env_id", sc.EnvironmentID.String(),
			"flag_key", sc.FlagKey, "attempt", sc.Attempts+1, "err", applyErr.Error())
	} else if err := q.MarkScheduledChangeExecuted(ctx, db.MarkScheduledChangeExecutedParams{ID: sc.ID, ExecutedAt: &now}); err != nil {
		return true, fmt.Errorf("mark scheduled change executed: %w", err)
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
	row, current, err := lockFlag(ctx, q, sc.EnvironmentID, sc.FlagKey)
	if err != nil {
		return eval.Flag{}, err
	}
	next, err := applyFlagPatch(ctx, q, sc.EnvironmentID, current, sc.Patch)
	if err != nil {
		return eval.Flag{}, err
	}
	meta := map[string]any{"source": SourceSchedule, "scheduled_change_id": sc.ID.String()}
	after, err := writeFlag(ctx, q, row.ID, current, next, sc.CreatedBy, actionUpdate, meta)
	if err != nil {
		return eval.Flag{}, err
	}
	if err := s.flagChanged(ctx, q, sc.EnvironmentID, sc.FlagKey, sc.CreatedBy, &current, &after); err != nil {
		return eval.Flag{}, err
	}
	return after, notify.Enqueue(ctx, q, sc.EnvironmentID, notify.EventFlagUpdated, sc.FlagKey, sc.CreatedBy, after, &after)
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
