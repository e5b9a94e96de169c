package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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

// Change request statuses (docs/reference/flags.md, Change requests).
const (
	crPending   = "pending"
	crApproved  = "approved"
	crRejected  = "rejected"
	crCancelled = "cancelled"
)

var (
	errChangeRequestNotFound   = apperr.E(apperr.NotFound, "change request not found")
	errChangeRequestNotPending = apperr.E(apperr.Conflict, "the change request is no longer pending")
)

// ListChangeRequests returns an environment's change requests, newest
// first, optionally only those of one status.
func (s *Service) ListChangeRequests(ctx context.Context, p *auth.Principal, envID uuid.UUID, status *string) ([]db.ChangeRequest, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	out, err := q.ListChangeRequests(ctx, db.ListChangeRequestsParams{EnvironmentID: envID, Status: status})
	if err != nil {
		return nil, fmt.Errorf("list change requests: %w", err)
	}
	return out, nil
}

// isRequester reports whether p opened cr: users by id, SDK keys by actor.
func isRequester(p *auth.Principal, cr db.ChangeRequest) bool {
	if cr.RequestedByUserID != nil {
		return p.Kind == auth.KindUser && p.UserID == *cr.RequestedByUserID
	}
	return cr.RequestedBy == p.Actor()
}

// lockPendingChangeRequest locks a change request of env for review. Reviewing
// one that is not pending is 409 (docs/reference/flags.md, Change requests),
// also when two reviewers act at once (the row lock serialises them; the second
// sees the first's result).
func lockPendingChangeRequest(ctx context.Context, q *db.Queries, envID uuid.UUID, id int64) (db.ChangeRequest, error) {
	cr, err := q.LockChangeRequest(ctx, db.LockChangeRequestParams{EnvironmentID: envID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.ChangeRequest{}, errChangeRequestNotFound
	}
	if err != nil {
		return db.ChangeRequest{}, fmt.Errorf("lock change request: %w", err)
	}
	if cr.Status != crPending {
		return db.ChangeRequest{}, errChangeRequestNotPending
	}
	return cr, nil
}

// ApproveChangeRequest applies a pending change request's patch to the flag's
// current state (not a snapshot) in one transaction and returns the updated
// flag (docs/reference/flags.md, Change requests). Editors and admins may
// approve, never the requester (403).
func (s *Service) ApproveChangeRequest(ctx context.Context, p *auth.Principal, envID uuid.UUID, id int64) (eval.Flag, error) {
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (eval.Flag, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return eval.Flag{}, err
		}
		cr, err := lockPendingChangeRequest(ctx, q, env.ID, id)
		if err != nil {
			return eval.Flag{}, err
		}
		if isRequester(p, cr) {
			return eval.Flag{}, apperr.E(apperr.Forbidden, "you cannot approve your own change request")
		}
		if err := s.lockFlagReleases(ctx, q, env.ID, cr.FlagKey); err != nil {
			return eval.Flag{}, err
		}
		locked, err := lockFlag(ctx, q, s.trail, env.ID, cr.FlagKey)
		if err != nil {
			return eval.Flag{}, err
		}
		current := locked.flag
		next, err := applyFlagPatch(ctx, q, env.ID, current, cr.Patch)
		if err != nil {
			return eval.Flag{}, err
		}
		meta := map[string]any{"source": SourceChangeRequest, "change_request_id": cr.ID}
		after, err := writeFlag(ctx, q, s.trail, locked, next, p.Actor(), actionUpdate, meta)
		if err != nil {
			return eval.Flag{}, err
		}
		if err := s.flagChanged(ctx, q, env.ID, cr.FlagKey, p.Actor(), &current, &after); err != nil {
			return eval.Flag{}, err
		}
		now := s.now().UTC()
		reviewer := p.Actor()
		pending := cr
		cr, err = q.SetChangeRequestStatus(ctx, db.SetChangeRequestStatusParams{
			ID: cr.ID, Status: crApproved, ReviewedBy: &reviewer, ReviewedAt: &now,
		})
		if err != nil {
			return eval.Flag{}, fmt.Errorf("approve change request: %w", err)
		}
		// Approval applies the patch at once: the trail has the flag's
		// update (above), the approval, and the request applied.
		if err := s.recordChangeRequest(ctx, q, env, "change_request.approved", &pending, cr); err != nil {
			return eval.Flag{}, err
		}
		if err := s.recordChangeRequest(ctx, q, env, "change_request.applied", nil, cr); err != nil {
			return eval.Flag{}, err
		}
		if err := notify.Enqueue(ctx, q, env.ID, notify.EventChangeRequestApproved, cr.FlagKey, reviewer, notify.ChangeRequestData(cr), &after); err != nil {
			return eval.Flag{}, err
		}
		return after, notify.Enqueue(ctx, q, env.ID, notify.EventFlagUpdated, cr.FlagKey, reviewer, after, &after)
	})
	if err != nil {
		return eval.Flag{}, store.AdaptError(err)
	}
	s.publish(ctx, upsertEvent(out))
	return out, nil
}

// RejectChangeRequest rejects a pending change request, storing the
// optional reason; the flag is untouched (docs/reference/flags.md, Change
// requests).
func (s *Service) RejectChangeRequest(ctx context.Context, p *auth.Principal, envID uuid.UUID, id int64, reason *string) error {
	return store.AdaptError(store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return err
		}
		cr, err := lockPendingChangeRequest(ctx, q, env.ID, id)
		if err != nil {
			return err
		}
		now := s.now().UTC()
		reviewer := p.Actor()
		pending := cr
		cr, err = q.SetChangeRequestStatus(ctx, db.SetChangeRequestStatusParams{
			ID: cr.ID, Status: crRejected, ReviewedBy: &reviewer, ReviewedAt: &now, Reason: nonEmpty(reason),
		})
		if err != nil {
			return fmt.Errorf("reject change request: %w", err)
		}
		if err := s.recordChangeRequest(ctx, q, env, "change_request.rejected", &pending, cr); err != nil {
			return err
		}
		flag, err := currentFlag(ctx, q, env.ID, cr.FlagKey)
		if err != nil {
			return err
		}
		return notify.Enqueue(ctx, q, env.ID, notify.EventChangeRequestRejected, cr.FlagKey, reviewer, notify.ChangeRequestData(cr), flag)
	}))
}

// CancelChangeRequest withdraws a pending change request. Only its
// requester or a workspace admin may; for anyone else, and for a request
// that is not pending, it does not exist: 404 (docs/reference/flags.md,
// Change requests).
func (s *Service) CancelChangeRequest(ctx context.Context, p *auth.Principal, envID uuid.UUID, id int64) error {
	return store.AdaptError(store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		env, err := access.Env(ctx, q, p, envID, access.Read)
		if err != nil {
			return err
		}
		cr, err := q.LockChangeRequest(ctx, db.LockChangeRequestParams{EnvironmentID: env.ID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && (cr.Status != crPending || !(isRequester(p, cr) || p.WorkspaceAdmin()))) {
			return errChangeRequestNotFound
		}
		if err != nil {
			return fmt.Errorf("lock change request: %w", err)
		}
		if p.ReadOnly {
			return access.ErrReadOnly
		}
		now := s.now().UTC()
		actor := p.Actor()
		cancelled, err := q.SetChangeRequestStatus(ctx, db.SetChangeRequestStatusParams{
			ID: cr.ID, Status: crCancelled, ReviewedBy: &actor, ReviewedAt: &now,
		})
		if err != nil {
			return err
		}
		// A withdrawal is an update of the request: it stays listed, cancelled.
		return s.recordChangeRequest(ctx, q, env, "change_request.updated", &cr, cancelled)
	}))
}

// recordChangeRequest appends a change of a change request to the audit
// trail, its states the change request as the API shows it (the data of
// its notifications).
func (s *Service) recordChangeRequest(ctx context.Context, q *db.Queries, env db.Environment, action string, before *db.ChangeRequest, after db.ChangeRequest) error {
	c := audit.Change{
		Action:   action,
		Resource: audit.Resource{Type: audit.ChangeRequest, ID: strconv.FormatInt(after.ID, 10), Key: audit.Str(after.FlagKey)},
		After:    notify.ChangeRequestData(after),
	}
	if before != nil {
		c.Before = notify.ChangeRequestData(*before)
	}
	return record(ctx, q, s.trail, env, c)
}

// currentFlag returns the flag of key as it stands, nil when there is none.
func currentFlag(ctx context.Context, q *db.Queries, envID uuid.UUID, key string) (*eval.Flag, error) {
	row, err := q.GetFlag(ctx, db.GetFlagParams{EnvironmentID: envID, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := flagFromRow(row)
	return &f, err
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}
