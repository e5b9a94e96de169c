package scim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/groupsync"
	"github.com/switchyard/switchyard/server/store"
)

// User is a workspace user as SCIM sees them.
type User = db.GetSCIMUserRow

// noPassword is the password hash of a provisioned user: it matches no
// password, so they sign in only through single sign-on.
const noPassword = ""

var errLastAdmin = apperr.E(apperr.Invalid, "the last active workspace admin cannot be deactivated")

// GetUser returns a user by their SCIM id, the decimal user id.
func (s *Service) GetUser(ctx context.Context, id string) (User, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return User{}, errNotFound("user")
	}
	return getUser(ctx, db.New(s.pool), n)
}

func getUser(ctx context.Context, q *db.Queries, id int64) (User, error) {
	u, err := q.GetSCIMUser(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, errNotFound("user")
	}
	if err != nil {
		return User{}, fmt.Errorf("get user: %w", store.AdaptError(err))
	}
	return u, nil
}

// ListUsers returns one page of the users the filter selects (userName,
// case-insensitively, or externalId), oldest first, and how many there are.
// offset is startIndex - 1.
func (s *Service) ListUsers(ctx context.Context, f Filter, offset, limit int) ([]User, int64, error) {
	var p db.ListSCIMUsersParams
	switch strings.ToLower(f.Attr) {
	case "":
	case "username":
		p.UserName = &f.Value
	case "externalid":
		p.ExternalID = &f.Value
	default:
		return nil, 0, &Error{Status: 400, SCIMType: scimInvalidFilter, Detail: "users filter on userName or externalId"}
	}
	q := db.New(s.pool)
	total, err := q.CountSCIMUsers(ctx, db.CountSCIMUsersParams{UserName: p.UserName, ExternalID: p.ExternalID})
	if err != nil {
		return nil, 0, fmt.Errorf("count users: %w", store.AdaptError(err))
	}
	p.RowOffset, p.RowLimit = int32(offset), int32(limit)
	rows, err := q.ListSCIMUsers(ctx, p)
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", store.AdaptError(err))
	}
	users := make([]User, len(rows))
	for i, r := range rows {
		users[i] = User(r)
	}
	return users, total, nil
}

// CreateUser provisions a user from a User resource: workspace role viewer,
// no password, active unless the resource says otherwise. A userName in use
// in any letter case is a uniqueness conflict, except for a user the
// provider deleted, who comes back with the resource's attributes.
func (s *Service) CreateUser(ctx context.Context, actor Actor, resource map[string]any) (User, error) {
	st := userState{active: true}
	if err := st.setAll(resource); err != nil {
		return User{}, err
	}
	if st.userName == "" {
		return User{}, errInvalidValue("userName is required")
	}
	ctx = actor.as(ctx)
	u, err := txV(ctx, s, func(q *db.Queries) (User, error) {
		// A created user may start deactivated; the workspace lock keeps
		// the admin count of a revived admin consistent, as in modifyUser.
		if err := q.LockWorkspace(ctx); err != nil {
			return User{}, fmt.Errorf("lock workspace: %w", store.AdaptError(err))
		}
		existing, err := q.LockUserByEmail(ctx, st.userName)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			created, err := q.CreateUser(ctx, db.CreateUserParams{Name: st.name(), Email: st.userName, PasswordHash: noPassword, Role: auth.RoleViewer})
			if err != nil {
				return User{}, s.uniqueness(err)
			}
			if err := s.writeUser(ctx, q, created.ID, &st); err != nil {
				return User{}, err
			}
			return s.recordUser(ctx, q, nil, User{}, created.ID)
		case err != nil:
			return User{}, fmt.Errorf("look up user: %w", store.AdaptError(err))
		case !existing.Deleted:
			return User{}, errUniqueness("userName is already in use")
		}
		// The provider deleted this user and now creates them again: the
		// user row never went, so this reactivates or updates it.
		before, err := groupsync.LockUser(ctx, q, existing.ID)
		if err != nil {
			return User{}, err
		}
		if err := s.update(ctx, q, existing.ID, &st); err != nil {
			return User{}, err
		}
		return s.recordUser(ctx, q, &before, User{}, existing.ID)
	})
	if err != nil {
		return User{}, err
	}
	s.logChange(ctx, actor, "create", "User", strconv.FormatInt(u.ID, 10))
	return u, nil
}

// ReplaceUser applies a User resource to an existing user (PUT). Attributes
// the resource leaves out keep their values.
func (s *Service) ReplaceUser(ctx context.Context, actor Actor, id string, resource map[string]any) (User, error) {
	return s.modifyUser(ctx, actor, "replace", id, func(st *userState) error {
		if err := st.setAll(resource); err != nil {
			return err
		}
		if st.userName == "" {
			return errInvalidValue("userName is required")
		}
		return nil
	})
}

// PatchUser applies a PATCH's operations to a user.
func (s *Service) PatchUser(ctx context.Context, actor Actor, id string, ops []patchOp) (User, error) {
	return s.modifyUser(ctx, actor, "update", id, func(st *userState) error { return applyUserPatch(st, ops) })
}

// modifyUser reads a user into a userState under the workspace and user row
// locks, lets change edit it and writes the result.
func (s *Service) modifyUser(ctx context.Context, actor Actor, action, id string, change func(*userState) error) (User, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return User{}, errNotFound("user")
	}
	ctx = actor.as(ctx)
	u, err := txV(ctx, s, func(q *db.Queries) (User, error) {
		// The workspace lock first, as identity takes it: a deactivation
		// counts the active admins one after another.
		if err := q.LockWorkspace(ctx); err != nil {
			return User{}, fmt.Errorf("lock workspace: %w", store.AdaptError(err))
		}
		cur, err := getUser(ctx, q, n)
		if err != nil {
			return User{}, err
		}
		before, err := groupsync.LockUser(ctx, q, n)
		if err != nil {
			return User{}, err
		}
		st := userState{userName: cur.Email, current: cur.Name, given: cur.GivenName, family: cur.FamilyName, externalID: cur.ExternalID, active: cur.Active}
		if err := change(&st); err != nil {
			return User{}, err
		}
		if err := s.update(ctx, q, n, &st); err != nil {
			return User{}, err
		}
		return s.recordUser(ctx, q, &before, cur, n)
	})
	if err != nil {
		return User{}, err
	}
	s.logChange(ctx, actor, action, "User", id)
	return u, nil
}

// recordUser records what a SCIM request did to user id, whose state
// before it was before (nil for a user it created) and, as SCIM saw them,
// prev: user.created, user.deactivated, user.reactivated, or user.updated
// when anything else changed, SCIM's own attributes (externalId, the parts
// of the name) included; nothing when nothing changed. Before and after
// are the user as the API shows them. It returns the user as SCIM sees
// them now.
func (s *Service) recordUser(ctx context.Context, q *db.Queries, before *groupsync.User, prev User, id int64) (User, error) {
	now, err := getUser(ctx, q, id)
	if err != nil {
		return User{}, err
	}
	after, err := groupsync.LockUser(ctx, q, id)
	if err != nil {
		return User{}, err
	}
	action := "user.updated"
	switch {
	case before == nil:
		action = "user.created"
	case before.Active && !after.Active:
		action = "user.deactivated"
	case !before.Active && after.Active:
		action = "user.reactivated"
	case *before == after && sameSCIMAttrs(prev, now):
		return now, nil
	}
	return now, groupsync.RecordUser(ctx, q, s.trail, action, before, &after)
}

// sameSCIMAttrs reports whether a and b hold the same SCIM-only attributes.
func sameSCIMAttrs(a, b User) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.ExternalID, b.ExternalID) && eq(a.GivenName, b.GivenName) && eq(a.FamilyName, b.FamilyName)
}

// update writes st to user id: name, e-mail, activation and the SCIM
// attributes. The caller holds the workspace lock.
func (s *Service) update(ctx context.Context, q *db.Queries, id int64, st *userState) error {
	if err := q.UpdateUserNameAndEmail(ctx, db.UpdateUserNameAndEmailParams{ID: id, Name: st.name(), Email: st.userName}); err != nil {
		return s.uniqueness(err)
	}
	return s.writeUser(ctx, q, id, st)
}

// writeUser stores st's activation and SCIM attributes. Deactivating works
// exactly as the admin route does (docs/reference/identity.md, Deactivation):
// the last active admin stays, sessions are deleted, and the trigger on
// users.active revokes everything the user holds on every instance.
// Reactivating applies the group rules as they are now, which may have
// changed while the user was away. The caller holds the workspace lock.
func (s *Service) writeUser(ctx context.Context, q *db.Queries, id int64, st *userState) error {
	u, err := q.LockUser(ctx, id)
	if err != nil {
		return fmt.Errorf("lock user: %w", store.AdaptError(err))
	}
	if u.Active && !st.active {
		if err := deactivate(ctx, q, u); err != nil {
			return err
		}
	} else if !u.Active && st.active {
		if _, err := q.UpdateUser(ctx, db.UpdateUserParams{ID: id, Active: &st.active}); err != nil {
			return fmt.Errorf("reactivate user: %w", store.AdaptError(err))
		}
		if err := s.applyGroups(ctx, q, []int64{id}); err != nil {
			return err
		}
	}
	if err := q.UpsertSCIMUser(ctx, db.UpsertSCIMUserParams{UserID: id, ExternalID: st.externalID, GivenName: st.given, FamilyName: st.family}); err != nil {
		return fmt.Errorf("store scim attributes: %w", store.AdaptError(err))
	}
	return nil
}

// deactivate deactivates an active user whose row the caller has locked, and
// ends their sessions. The caller holds the workspace lock.
func deactivate(ctx context.Context, q *db.Queries, u db.LockUserRow) error {
	if u.Role == auth.RoleAdmin {
		n, err := q.CountWorkspaceAdmins(ctx)
		if err != nil {
			return fmt.Errorf("count admins: %w", store.AdaptError(err))
		}
		if n <= 1 {
			return errLastAdmin
		}
	}
	inactive := false
	if _, err := q.UpdateUser(ctx, db.UpdateUserParams{ID: u.ID, Active: &inactive}); err != nil {
		return fmt.Errorf("deactivate user: %w", store.AdaptError(err))
	}
	if err := q.DeleteSessionsByUser(ctx, u.ID); err != nil {
		return fmt.Errorf("end sessions: %w", store.AdaptError(err))
	}
	return nil
}

// DeleteUser deactivates a user and removes their project and group
// memberships and the groups of their last sign-in, and applies the group
// rules to what is left (no groups: no workspace admin through an admin
// group). The row stays, for the audit trail; SCIM no longer finds it. It
// records user.deleted (after: the user as they stay, deactivated), a
// member.deleted per membership and a scim.updated per group they left.
func (s *Service) DeleteUser(ctx context.Context, actor Actor, id string) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return errNotFound("user")
	}
	ctx = actor.as(ctx)
	_, err = txV(ctx, s, func(q *db.Queries) (struct{}, error) {
		if err := q.LockWorkspace(ctx); err != nil {
			return struct{}{}, fmt.Errorf("lock workspace: %w", store.AdaptError(err))
		}
		cur, err := getUser(ctx, q, n)
		if err != nil {
			return struct{}{}, err
		}
		u, err := q.LockUser(ctx, n)
		if err != nil {
			return struct{}{}, fmt.Errorf("lock user: %w", store.AdaptError(err))
		}
		before, err := groupsync.LockUser(ctx, q, n)
		if err != nil {
			return struct{}{}, err
		}
		if u.Active {
			if err := deactivate(ctx, q, u); err != nil {
				return struct{}{}, err
			}
		}
		if err := groupsync.RemoveMemberships(ctx, q, s.trail, before); err != nil {
			return struct{}{}, err
		}
		if err := s.leaveGroups(ctx, q, n); err != nil {
			return struct{}{}, err
		}
		if err := q.SetUserSSOGroups(ctx, db.SetUserSSOGroupsParams{ID: n, Groups: []string{}}); err != nil {
			return struct{}{}, fmt.Errorf("forget sso groups: %w", store.AdaptError(err))
		}
		if err := s.applyGroups(ctx, q, []int64{n}); err != nil {
			return struct{}{}, err
		}
		err = q.UpsertSCIMUser(ctx, db.UpsertSCIMUserParams{UserID: n, ExternalID: cur.ExternalID, GivenName: cur.GivenName, FamilyName: cur.FamilyName, Deleted: true})
		if err != nil {
			return struct{}{}, fmt.Errorf("mark user deleted: %w", store.AdaptError(err))
		}
		after, err := groupsync.LockUser(ctx, q, n)
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, groupsync.RecordUser(ctx, q, s.trail, "user.deleted", &before, &after)
	})
	if err != nil {
		return err
	}
	s.logChange(ctx, actor, "delete", "User", id)
	return nil
}

// uniqueness turns the e-mail's unique violation into SCIM's uniqueness
// conflict.
func (s *Service) uniqueness(err error) error {
	err = store.AdaptError(err)
	if apperr.KindOf(err) == apperr.Conflict {
		return errUniqueness("userName is already in use")
	}
	return fmt.Errorf("write user: %w", err)
}
