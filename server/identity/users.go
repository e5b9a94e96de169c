package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/groupsync"
	"github.com/switchyard/switchyard/server/store"
)

var (
	errUserNotFound  = apperr.E(apperr.NotFound, "user not found")
	errDeleteSelf    = apperr.E(apperr.Invalid, "you cannot delete yourself")
	errLastAdmin     = apperr.E(apperr.Invalid, "the last workspace admin cannot be deleted")
	errDemoteLastAdm = apperr.E(apperr.Invalid, "the last workspace admin cannot be demoted")
	errDeactSelf     = apperr.E(apperr.Invalid, "you cannot deactivate yourself")
	errDeactLastAdm  = apperr.E(apperr.Invalid, "the last active workspace admin cannot be deactivated")
)

// UserInput is a new workspace user.
type UserInput struct {
	Name     string
	Email    string
	Role     string
	Password string
}

// UserPatch changes a user; nil fields keep their values.
type UserPatch struct {
	Name *string
	Role *string
	// Active false deactivates the user, true reactivates them
	// (docs/reference/identity.md, Deactivation).
	Active *bool
}

// ListUsers returns the workspace's users, newest first, without password
// hashes. Workspace admin.
func (s *Service) ListUsers(ctx context.Context, p *auth.Principal) ([]db.ListUsersRow, error) {
	if err := access.RequireWorkspaceAdmin(p, access.AdminRead); err != nil {
		return nil, err
	}
	users, err := db.New(s.pool).ListUsers(ctx)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", store.AdaptError(err))
	}
	return users, nil
}

// CreateUser creates a workspace user with an argon2id password hash. An
// email in use, in any letter case, answers Conflict. Workspace admin.
func (s *Service) CreateUser(ctx context.Context, p *auth.Principal, in UserInput) (db.ListUsersRow, error) {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return db.ListUsersRow{}, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return db.ListUsersRow{}, apperr.Field("name", "must not be empty")
	}
	email := strings.TrimSpace(in.Email)
	if email == "" {
		return db.ListUsersRow{}, apperr.Field("email", "must not be empty")
	}
	if err := validateRole(in.Role); err != nil {
		return db.ListUsersRow{}, err
	}
	if err := validatePassword(in.Password); err != nil {
		return db.ListUsersRow{}, err
	}
	hash, err := auth.HashPassword(in.Password)
	if err != nil {
		return db.ListUsersRow{}, err
	}
	return txV(ctx, s, func(q *db.Queries) (db.ListUsersRow, error) {
		u, err := q.CreateUser(ctx, db.CreateUserParams{Name: name, Email: email, PasswordHash: hash, Role: in.Role})
		if err != nil {
			// users_email_key (on lower(email)) becomes Conflict "email already in use".
			return db.ListUsersRow{}, fmt.Errorf("create user: %w", store.AdaptError(err))
		}
		created := db.ListUsersRow(u)
		return created, s.rec.recordUser(ctx, q, "user.created", nil, &created)
	})
}

// UpdateUser changes a user's name, workspace role or whether they are
// active (extensions, see docs/api.md). One active admin always remains, so
// demoting or deactivating the last one is invalid, and nobody deactivates
// themselves (docs/reference/identity.md, Invariants); the workspace row lock
// makes concurrent demotions, deactivations and deletions count one after
// another. Deactivating deletes the user's sessions and, through the trigger
// on users.active, revokes everything they hold on every instance; their
// tokens are refused while they stay deactivated (docs/reference/identity.md,
// Deactivation). Reactivating applies single sign-on's group rules as they
// are now, as SCIM's reactivation does. Workspace admin.
func (s *Service) UpdateUser(ctx context.Context, p *auth.Principal, id int64, patch UserPatch) (db.ListUsersRow, error) {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return db.ListUsersRow{}, err
	}
	if patch.Name != nil {
		name := strings.TrimSpace(*patch.Name)
		if name == "" {
			return db.ListUsersRow{}, apperr.Field("name", "must not be empty")
		}
		patch.Name = &name
	}
	if patch.Role != nil {
		if err := validateRole(*patch.Role); err != nil {
			return db.ListUsersRow{}, err
		}
	}
	demotes := patch.Role != nil && *patch.Role != auth.RoleAdmin
	deactivates := patch.Active != nil && !*patch.Active
	activates := patch.Active != nil && *patch.Active
	if deactivates && id == p.UserID {
		return db.ListUsersRow{}, errDeactSelf
	}
	return txV(ctx, s, func(q *db.Queries) (db.ListUsersRow, error) {
		// Reactivating applies the group rules, which may demote an admin.
		if demotes || deactivates || activates {
			if err := q.LockWorkspace(ctx); err != nil {
				return db.ListUsersRow{}, fmt.Errorf("lock workspace: %w", store.AdaptError(err))
			}
		}
		u, err := lockUser(ctx, q, id)
		if err != nil {
			return db.ListUsersRow{}, err
		}
		// An inactive admin is not counted, so demoting or deactivating
		// one never needs another.
		if u.Role == auth.RoleAdmin && u.Active {
			switch {
			case deactivates:
				err = ensureAnotherAdmin(ctx, q, errDeactLastAdm)
			case demotes:
				err = ensureAnotherAdmin(ctx, q, errDemoteLastAdm)
			}
			if err != nil {
				return db.ListUsersRow{}, err
			}
		}
		row, err := q.UpdateUser(ctx, db.UpdateUserParams{ID: id, Name: patch.Name, Role: patch.Role, Active: patch.Active})
		if err != nil {
			return db.ListUsersRow{}, fmt.Errorf("update user: %w", store.AdaptError(err))
		}
		before, updated := db.ListUsersRow(u), db.ListUsersRow(row)
		if err := s.rec.recordUser(ctx, q, userAction(before, updated), &before, &updated); err != nil {
			return db.ListUsersRow{}, err
		}
		if deactivates {
			if err := q.DeleteSessionsByUser(ctx, id); err != nil {
				return db.ListUsersRow{}, fmt.Errorf("end sessions: %w", store.AdaptError(err))
			}
		}
		if activates && !u.Active {
			// As SCIM's reactivation does: single sign-on's group rules as
			// they are now, which may have changed while the user was away.
			if _, err := groupsync.Apply(ctx, q, s.trail, id); err != nil {
				return db.ListUsersRow{}, fmt.Errorf("apply group mappings: %w", err)
			}
			// Admin groups may have changed the role just written.
			now, err := lockUser(ctx, q, id)
			if err != nil {
				return db.ListUsersRow{}, err
			}
			return db.ListUsersRow(now), nil
		}
		return updated, nil
	})
}

// userAction is the audit action of a change of a user: deactivated or
// reactivated when it changes whether they are active, else updated.
func userAction(before, after db.ListUsersRow) string {
	switch {
	case before.Active && !after.Active:
		return "user.deactivated"
	case !before.Active && after.Active:
		return "user.reactivated"
	}
	return "user.updated"
}

// DeleteUser deletes a user and, by cascade, their sessions, tokens and project
// memberships, so every credential of theirs stops working at once. Deleting
// yourself or the last active admin is invalid; a deactivated admin may go
// (docs/reference/identity.md, Invariants). The workspace row lock makes
// concurrent deletions count one after another. Workspace admin.
func (s *Service) DeleteUser(ctx context.Context, p *auth.Principal, id int64) error {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return err
	}
	if id == p.UserID {
		return errDeleteSelf
	}
	return s.tx(ctx, func(q *db.Queries) error {
		if err := q.LockWorkspace(ctx); err != nil {
			return fmt.Errorf("lock workspace: %w", store.AdaptError(err))
		}
		u, err := lockUser(ctx, q, id)
		if err != nil {
			return err
		}
		if u.Role == auth.RoleAdmin && u.Active {
			if err := ensureAnotherAdmin(ctx, q, errLastAdmin); err != nil {
				return err
			}
		}
		// Their memberships end first, each an entry of its project (its
		// admins read the trail of their projects only); their sessions
		// and tokens go with the user, whose entry stands for them.
		member, err := groupsync.LockUser(ctx, q, id)
		if err != nil {
			return err
		}
		if err := groupsync.RemoveMemberships(ctx, q, s.trail, member); err != nil {
			return err
		}
		if err := q.DeleteUser(ctx, id); err != nil {
			return fmt.Errorf("delete user: %w", store.AdaptError(err))
		}
		before := db.ListUsersRow(u)
		return s.rec.recordUser(ctx, q, "user.deleted", &before, nil)
	})
}

// lockUser reads a user and locks the row until the transaction ends.
func lockUser(ctx context.Context, q *db.Queries, id int64) (db.LockUserRow, error) {
	u, err := q.LockUser(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.LockUserRow{}, errUserNotFound
	}
	if err != nil {
		return db.LockUserRow{}, fmt.Errorf("get user: %w", store.AdaptError(err))
	}
	return u, nil
}

// ensureAnotherAdmin returns errLast unless at least two active workspace
// admins exist, so that one may go. The caller holds the workspace row lock.
func ensureAnotherAdmin(ctx context.Context, q *db.Queries, errLast error) error {
	n, err := q.CountWorkspaceAdmins(ctx)
	if err != nil {
		return fmt.Errorf("count admins: %w", store.AdaptError(err))
	}
	if n <= 1 {
		return errLast
	}
	return nil
}

// validateRole checks a workspace or project role.
func validateRole(role string) error {
	switch role {
	case auth.RoleAdmin, auth.RoleEditor, auth.RoleViewer:
		return nil
	}
	return apperr.Field("role", "must be admin, editor or viewer")
}
