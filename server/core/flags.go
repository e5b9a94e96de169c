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
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/notify"
	"github.com/switchyard/switchyard/server/store"
)

var errFlagNotFound = apperr.E(apperr.NotFound, "flag not found")

func errApprovalRequired(what string) error {
	return apperr.Ef(apperr.Conflict, "this environment requires approval: %s is not allowed; patch the flag to open a change request", what)
}

// ListFlags returns an environment's flags, unexpanded, ordered by key.
// archived filters when set.
func (s *Service) ListFlags(ctx context.Context, p *auth.Principal, envID uuid.UUID, archived *bool) ([]eval.Flag, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	rows, err := q.ListFlags(ctx, db.ListFlagsParams{EnvironmentID: envID, Archived: archived})
	if err != nil {
		return nil, fmt.Errorf("list flags: %w", err)
	}
	flags := make([]eval.Flag, 0, len(rows))
	for _, r := range rows {
		f, err := flagFromRow(r)
		if err != nil {
			return nil, err
		}
		flags = append(flags, f)
	}
	return flags, nil
}

// GetFlag returns one flag, unexpanded.
func (s *Service) GetFlag(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string) (eval.Flag, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return eval.Flag{}, err
	}
	row, err := q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: envID, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return eval.Flag{}, errFlagNotFound
	}
	if err != nil {
		return eval.Flag{}, fmt.Errorf("get flag: %w", err)
	}
	return flagFromRow(row)
}

// PutFlag creates a flag, or replaces the whole configuration of an existing
// one (docs/reference/flags.md, Writes). Replacing is refused while the
// environment requires approval.
func (s *Service) PutFlag(ctx context.Context, p *auth.Principal, envID uuid.UUID, body json.RawMessage) (eval.Flag, error) {
	var in eval.Flag
	if err := json.Unmarshal(body, &in); err != nil {
		return eval.Flag{}, apperr.Wrap(apperr.Invalid, "the flag does not fit the Flag schema", err)
	}
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (eval.Flag, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return eval.Flag{}, err
		}
		in.EnvironmentID = env.ID.String()
		in = normalized(in)
		if err := validateFlag(ctx, q, env.ID, in); err != nil {
			return eval.Flag{}, err
		}
		out, err := s.storeFlag(ctx, q, env, in, p.Actor(), actionCreate, actionReplace, map[string]any{"source": SourceAPI})
		if err != nil {
			return eval.Flag{}, err
		}
		return out, notify.Enqueue(ctx, q, env.ID, notify.EventFlagCreated, out.Key, p.Actor(), out, &out)
	})
	if err != nil {
		return eval.Flag{}, store.AdaptError(err)
	}
	s.publish(ctx, upsertEvent(out))
	return out, nil
}

// storeFlag creates f in env or replaces the existing flag of its key, and
// audits it with createAction or replaceAction. Promotion into an
// environment uses it as well as POST.
func (s *Service) storeFlag(ctx context.Context, q *db.Queries, env db.Environment, f eval.Flag, actor, createAction, replaceAction string, metadata map[string]any) (eval.Flag, error) {
	if err := s.lockFlagReleases(ctx, q, env.ID, f.Key); err != nil {
		return eval.Flag{}, err
	}
	row, err := q.LockFlag(ctx, db.LockFlagParams{EnvironmentID: env.ID, Key: f.Key})
	if errors.Is(err, pgx.ErrNoRows) {
		params, perr := insertFlagParams(env.ID, f)
		if perr != nil {
			return eval.Flag{}, perr
		}
		var inserted db.Flag
		inserted, err = q.InsertFlag(ctx, params)
		switch {
		case err == nil:
			after, err := flagFromRow(inserted)
			if err != nil {
				return eval.Flag{}, err
			}
			return after, auditFlag(ctx, q, s.trail, 0, env.ID, f.Key, actor, createAction, nil, &after, metadata)
		case !errors.Is(err, pgx.ErrNoRows):
			return eval.Flag{}, store.AdaptError(err)
		}
		// A concurrent write created the key first: replace its flag.
		row, err = q.LockFlag(ctx, db.LockFlagParams{EnvironmentID: env.ID, Key: f.Key})
	}
	if err != nil {
		return eval.Flag{}, fmt.Errorf("lock flag: %w", err)
	}
	if env.RequireApproval {
		return eval.Flag{}, errApprovalRequired("replacing a flag")
	}
	before, err := flagFromRow(row)
	if err != nil {
		return eval.Flag{}, err
	}
	after, err := writeFlag(ctx, q, s.trail, lockedFlag{row: row, flag: before}, f, actor, replaceAction, metadata)
	if err != nil {
		return eval.Flag{}, err
	}
	return after, s.flagChanged(ctx, q, env.ID, f.Key, actor, &before, &after)
}

// PatchResult is what a PATCH did: applied the patch (Flag), or, in an
// environment that requires approval, queued it (ChangeRequest).
type PatchResult struct {
	Flag          *eval.Flag
	ChangeRequest *db.ChangeRequest
}

// PatchFlag applies a JSON merge patch to a flag's current state, or queues
// it as a change request while the environment requires approval
// (docs/reference/flags.md, Change requests).
func (s *Service) PatchFlag(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string, patch json.RawMessage) (PatchResult, error) {
	res, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (PatchResult, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return PatchResult{}, err
		}
		if err := s.lockFlagReleases(ctx, q, env.ID, key); err != nil {
			return PatchResult{}, err
		}
		locked, err := lockFlag(ctx, q, s.trail, env.ID, key)
		if err != nil {
			return PatchResult{}, err
		}
		current := locked.flag
		next, err := applyFlagPatch(ctx, q, env.ID, current, patch)
		if err != nil {
			return PatchResult{}, err
		}
		if env.RequireApproval {
			var requester *int64
			if p.Kind == auth.KindUser {
				requester = &p.UserID
			}
			cr, err := q.InsertChangeRequest(ctx, db.InsertChangeRequestParams{
				EnvironmentID: env.ID, FlagKey: key, Patch: patch, RequestedBy: p.Actor(), RequestedByUserID: requester,
			})
			if err != nil {
				return PatchResult{}, fmt.Errorf("open change request: %w", err)
			}
			if err := s.recordChangeRequest(ctx, q, env, "change_request.created", nil, cr); err != nil {
				return PatchResult{}, err
			}
			return PatchResult{ChangeRequest: &cr}, notify.Enqueue(ctx, q, env.ID, notify.EventChangeRequestOpened, key, p.Actor(), notify.ChangeRequestData(cr), &current)
		}
		after, err := writeFlag(ctx, q, s.trail, locked, next, p.Actor(), actionUpdate, map[string]any{"source": SourceAPI})
		if err != nil {
			return PatchResult{}, err
		}
		if err := s.flagChanged(ctx, q, env.ID, key, p.Actor(), &current, &after); err != nil {
			return PatchResult{}, err
		}
		return PatchResult{Flag: &after}, notify.Enqueue(ctx, q, env.ID, notify.EventFlagUpdated, key, p.Actor(), after, &after)
	})
	if err != nil {
		return PatchResult{}, store.AdaptError(err)
	}
	if res.Flag != nil {
		s.publish(ctx, upsertEvent(*res.Flag))
	}
	return res, nil
}

// lockedFlag is a flag row locked for the rest of the transaction, and
// decoded.
type lockedFlag struct {
	row  db.Flag
	flag eval.Flag
	// trailID is the id of the trail entry that the flag's write will
	// record, taken with the lock (0 when the trail is disabled): the
	// trail then costs a flag write no round trip (auditFlag).
	trailID int64
}

// lockFlag locks a flag row for the rest of the transaction (read-modify-
// write) and decodes it.
func lockFlag(ctx context.Context, q *db.Queries, trail *audit.Trail, envID uuid.UUID, key string) (lockedFlag, error) {
	var l lockedFlag
	var err error
	if trail.Enabled() {
		var r db.LockFlagTakingTrailIDRow
		r, err = q.LockFlagTakingTrailID(ctx, db.LockFlagTakingTrailIDParams{EnvironmentID: envID, Key: key})
		l.row, l.trailID = r.Flag, r.TrailID
	} else {
		l.row, err = q.LockFlag(ctx, db.LockFlagParams{EnvironmentID: envID, Key: key})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return lockedFlag{}, errFlagNotFound
	}
	if err != nil {
		return lockedFlag{}, fmt.Errorf("lock flag: %w", err)
	}
	l.flag, err = flagFromRow(l.row)
	return l, err
}

// writeFlag stores next over the locked flag and audits the change.
func writeFlag(ctx context.Context, q *db.Queries, trail *audit.Trail, locked lockedFlag, next eval.Flag, actor, action string, metadata map[string]any) (eval.Flag, error) {
	before := locked.flag
	params, err := updateFlagParams(locked.row.ID, next)
	if err != nil {
		return eval.Flag{}, err
	}
	updated, err := q.UpdateFlag(ctx, params)
	if err != nil {
		return eval.Flag{}, store.AdaptError(err)
	}
	after, err := flagFromRow(updated)
	if err != nil {
		return eval.Flag{}, err
	}
	return after, auditFlag(ctx, q, trail, locked.trailID, updated.EnvironmentID, before.Key, actor, action, &before, &after, metadata)
}

// applyFlagPatch applies a merge patch to current and validates the result.
// It is the one place a flag patch is applied: direct PATCH, scheduled
// changes and approved change requests all call it, always on the flag's
// current state, not a snapshot (docs/reference/flags.md, Change requests).
func applyFlagPatch(ctx context.Context, q *db.Queries, envID uuid.UUID, current eval.Flag, patch json.RawMessage) (eval.Flag, error) {
	pv, err := decodeJSON(patch)
	if err != nil {
		return eval.Flag{}, apperr.Wrap(apperr.BadRequest, "the patch is not valid JSON", err)
	}
	fields, ok := pv.(map[string]any)
	if !ok {
		return eval.Flag{}, apperr.E(apperr.Invalid, "a flag patch must be a JSON object")
	}
	if k, present := fields["key"]; present && k != current.Key {
		return eval.Flag{}, apperr.Field("key", "is immutable")
	}
	doc, err := json.Marshal(current)
	if err != nil {
		return eval.Flag{}, err
	}
	merged, err := applyMergePatch(doc, patch)
	if err != nil {
		return eval.Flag{}, err
	}
	var next eval.Flag
	if err := json.Unmarshal(merged, &next); err != nil {
		return eval.Flag{}, apperr.Wrap(apperr.Invalid, "the patched flag does not fit the Flag schema", err)
	}
	// Fields the server owns: a patch never changes them.
	next.Key, next.EnvironmentID, next.Version = current.Key, current.EnvironmentID, current.Version
	next.CreatedAt, next.UpdatedAt, next.ArchivedAt = current.CreatedAt, current.UpdatedAt, current.ArchivedAt
	next = normalized(next)
	if err := validateFlag(ctx, q, envID, next); err != nil {
		return eval.Flag{}, err
	}
	return next, nil
}

// DeleteFlag deletes a flag; refused while the environment requires approval.
func (s *Service) DeleteFlag(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string) error {
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return err
		}
		if err := s.lockFlagReleases(ctx, q, env.ID, key); err != nil {
			return err
		}
		locked, err := lockFlag(ctx, q, s.trail, env.ID, key)
		if err != nil {
			return err
		}
		if env.RequireApproval {
			return errApprovalRequired("deleting a flag")
		}
		before := locked.flag
		if err := q.DeleteFlag(ctx, locked.row.ID); err != nil {
			return fmt.Errorf("delete flag: %w", err)
		}
		if err := s.flagChanged(ctx, q, env.ID, key, p.Actor(), &before, nil); err != nil {
			return err
		}
		if err := notify.Enqueue(ctx, q, env.ID, notify.EventFlagDeleted, key, p.Actor(), before, &before); err != nil {
			return err
		}
		return auditFlag(ctx, q, s.trail, locked.trailID, env.ID, key, p.Actor(), actionDelete, &before, nil, map[string]any{"source": SourceAPI})
	})
	if err != nil {
		return store.AdaptError(err)
	}
	s.publish(ctx, bus.Event{Op: bus.OpDelete, EnvID: envID, Key: key})
	return nil
}

// SetArchived archives (archived_at set) or unarchives a flag. Archival is a
// write: the version rises, it is audited and streamed
// (docs/reference/flags.md, Archive). Archived flags stay in the stream and
// evaluate normally, so archival is allowed without approval. Archiving an
// archived flag changes nothing.
func (s *Service) SetArchived(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string, archived bool) (eval.Flag, error) {
	var changed bool
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (eval.Flag, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return eval.Flag{}, err
		}
		if err := s.lockFlagReleases(ctx, q, env.ID, key); err != nil {
			return eval.Flag{}, err
		}
		locked, err := lockFlag(ctx, q, s.trail, env.ID, key)
		if err != nil {
			return eval.Flag{}, err
		}
		row, before := locked.row, locked.flag
		if (row.ArchivedAt != nil) == archived {
			return before, nil
		}
		var at *time.Time
		action := actionUnarchive
		if archived {
			now := s.now().UTC()
			at, action = &now, actionArchive
		}
		updated, err := q.SetFlagArchivedAt(ctx, db.SetFlagArchivedAtParams{ID: row.ID, ArchivedAt: at})
		if err != nil {
			return eval.Flag{}, err
		}
		after, err := flagFromRow(updated)
		if err != nil {
			return eval.Flag{}, err
		}
		changed = true
		if err := s.flagChanged(ctx, q, env.ID, key, p.Actor(), &before, &after); err != nil {
			return eval.Flag{}, err
		}
		if err := notify.Enqueue(ctx, q, env.ID, notify.EventFlagUpdated, key, p.Actor(), after, &after); err != nil {
			return eval.Flag{}, err
		}
		return after, auditFlag(ctx, q, s.trail, locked.trailID, env.ID, key, p.Actor(), action, &before, &after, map[string]any{"source": SourceAPI})
	})
	if err != nil {
		return eval.Flag{}, store.AdaptError(err)
	}
	if changed {
		s.publish(ctx, upsertEvent(out))
	}
	return out, nil
}

// PromoteFlag copies a flag's configuration into another environment, of
// the same or another project the caller can write, atomically, and returns
// it as it now exists there (docs/reference/flags.md, Promote).
func (s *Service) PromoteFlag(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string, targetID uuid.UUID) (eval.Flag, error) {
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (eval.Flag, error) {
		src, err := access.Env(ctx, q, p, envID, access.Read)
		if err != nil {
			return eval.Flag{}, err
		}
		row, err := q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: src.ID, Key: key})
		if errors.Is(err, pgx.ErrNoRows) {
			return eval.Flag{}, errFlagNotFound
		}
		if err != nil {
			return eval.Flag{}, err
		}
		dst, err := access.Env(ctx, q, p, targetID, access.Write)
		if err != nil {
			if apperr.KindOf(err) == apperr.NotFound {
				return eval.Flag{}, apperr.Field("target_env_id", "names no environment you can see")
			}
			return eval.Flag{}, err
		}
		if dst.ID == src.ID {
			return eval.Flag{}, apperr.Field("target_env_id", "is the flag's own environment")
		}
		if dst.RequireApproval {
			return eval.Flag{}, errApprovalRequired("promoting into it")
		}
		f, err := flagFromRow(row)
		if err != nil {
			return eval.Flag{}, err
		}
		f.EnvironmentID = dst.ID.String()
		if err := validateFlag(ctx, q, dst.ID, f); err != nil {
			return eval.Flag{}, err
		}
		meta := map[string]any{"source": SourceAPI, "source_environment_id": src.ID.String()}
		out, err := s.storeFlag(ctx, q, dst, f, p.Actor(), actionPromote, actionPromote, meta)
		if err != nil {
			return eval.Flag{}, err
		}
		// flag.promoted is notified to the target environment.
		return out, notify.Enqueue(ctx, q, dst.ID, notify.EventFlagPromoted, out.Key, p.Actor(), out, &out)
	})
	if err != nil {
		return eval.Flag{}, store.AdaptError(err)
	}
	s.publish(ctx, upsertEvent(out))
	return out, nil
}

func upsertEvent(f eval.Flag) bus.Event {
	return bus.Event{Op: bus.OpUpsert, EnvID: uuid.MustParse(f.EnvironmentID), Key: f.Key, Version: f.Version}
}

// publish announces committed changes (bus.PublishCommitted).
func (s *Service) publish(ctx context.Context, events ...bus.Event) {
	bus.PublishCommitted(ctx, s.bus, s.logger, events...)
}
