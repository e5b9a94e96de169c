package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

var errMemberNotFound = apperr.E(apperr.NotFound, "member not found")

// ListMembers returns a project's members with their names and emails,
// newest member first. Project admin.
func (s *Service) ListMembers(ctx context.Context, p *auth.Principal, projectID uuid.UUID) ([]db.ListMembersRow, error) {
	return txV(ctx, s, func(q *db.Queries) ([]db.ListMembersRow, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.AdminRead); err != nil {
			return nil, err
		}
		members, err := q.ListMembers(ctx, projectID)
		if err != nil {
			return nil, fmt.Errorf("list members: %w", store.AdaptError(err))
		}
		return members, nil
	})
}

// AddMember gives a workspace user a role in a project. An unknown user is not
// found; an existing member answers Conflict (docs/reference/identity.md,
// Projects and environments).
func (s *Service) AddMember(ctx context.Context, p *auth.Principal, projectID uuid.UUID, userID int64, role string) (db.ListMembersRow, error) {
	return txV(ctx, s, func(q *db.Queries) (db.ListMembersRow, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return db.ListMembersRow{}, err
		}
		if err := validateRole(role); err != nil {
			return db.ListMembersRow{}, err
		}
		// The foreign key turns an unknown user into NotFound and the primary
		// key a second membership into Conflict (store.AdaptError).
		if err := q.AddMember(ctx, db.AddMemberParams{ProjectID: projectID, UserID: userID, Role: role}); err != nil {
			return db.ListMembersRow{}, fmt.Errorf("add member: %w", store.AdaptError(err))
		}
		m, err := lockMember(ctx, q, projectID, userID)
		if err != nil {
			return m, err
		}
		return m, s.rec.recordMember(ctx, q, "member.created", projectID, nil, &m)
	})
}

// UpdateMember changes a member's role in a project. Roles are independent
// across projects, so no other membership changes.
func (s *Service) UpdateMember(ctx context.Context, p *auth.Principal, projectID uuid.UUID, userID int64, role string) (db.ListMembersRow, error) {
	return txV(ctx, s, func(q *db.Queries) (db.ListMembersRow, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return db.ListMembersRow{}, err
		}
		if err := validateRole(role); err != nil {
			return db.ListMembersRow{}, err
		}
		before, err := lockMember(ctx, q, projectID, userID)
		if err != nil {
			return db.ListMembersRow{}, err
		}
		if _, err := q.UpdateMemberRole(ctx, db.UpdateMemberRoleParams{ProjectID: projectID, UserID: userID, Role: role}); err != nil {
			return db.ListMembersRow{}, fmt.Errorf("update member: %w", store.AdaptError(err))
		}
		after := before
		after.Role = role
		return after, s.rec.recordMember(ctx, q, "member.role_changed", projectID, &before, &after)
	})
}

// RemoveMember revokes a user's access to a project; the account is kept.
func (s *Service) RemoveMember(ctx context.Context, p *auth.Principal, projectID uuid.UUID, userID int64) error {
	return s.tx(ctx, func(q *db.Queries) error {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return err
		}
		before, err := lockMember(ctx, q, projectID, userID)
		if err != nil {
			return err
		}
		if _, err := q.RemoveMember(ctx, db.RemoveMemberParams{ProjectID: projectID, UserID: userID}); err != nil {
			return fmt.Errorf("remove member: %w", store.AdaptError(err))
		}
		return s.rec.recordMember(ctx, q, "member.deleted", projectID, &before, nil)
	})
}

// lockMember reads a membership and locks it until the transaction ends, so
// that what a change records as before is what it replaced.
func lockMember(ctx context.Context, q *db.Queries, projectID uuid.UUID, userID int64) (db.ListMembersRow, error) {
	m, err := q.LockMember(ctx, db.LockMemberParams{ProjectID: projectID, UserID: userID})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.ListMembersRow{}, errMemberNotFound
	}
	if err != nil {
		return db.ListMembersRow{}, fmt.Errorf("lock member: %w", store.AdaptError(err))
	}
	return db.ListMembersRow(m), nil
}
