package sso

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// roleRank orders project roles, so a user in several mapped groups gets the
// highest of their roles.
var roleRank = map[string]int{auth.RoleViewer: 1, auth.RoleEditor: 2, auth.RoleAdmin: 3}

// applySignIn finds, links or provisions the user of cl and applies admin
// groups and group mappings, inside the sign-in's transaction: a failure
// keeps none of it (docs/sso.md, What a sign-in does).
func (s *Service) applySignIn(ctx context.Context, q *db.Queries, row db.WorkspaceSso, cl claims) (int64, error) {
	userID, role, err := s.findOrCreate(ctx, q, row, cl)
	if err != nil {
		return 0, err
	}
	if err := s.applyAdminGroups(ctx, q, row, cl, userID, role); err != nil {
		return 0, err
	}
	if err := applyGroupMappings(ctx, q, row, cl, userID); err != nil {
		return 0, err
	}
	return userID, nil
}

// findOrCreate: by the provider's subject first, then by email (linking the
// account), then a new user when auto-provisioning is on.
func (s *Service) findOrCreate(ctx context.Context, q *db.Queries, row db.WorkspaceSso, cl claims) (int64, string, error) {
	u, err := q.GetUserByOIDCSubject(ctx, db.GetUserByOIDCSubjectParams{Issuer: &cl.Issuer, Subject: &cl.Subject})
	switch {
	case err == nil:
		if !u.Active {
			return 0, "", fail(CodeDeactivated, "user %d is deactivated", u.ID)
		}
		return u.ID, u.Role, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return 0, "", err
	}
	byEmail, err := q.GetUserByEmailForUpdate(ctx, cl.Email)
	switch {
	case err == nil:
		if !byEmail.Active {
			return 0, "", fail(CodeDeactivated, "user %d is deactivated", byEmail.ID)
		}
		// Linked to another account of the provider: the email moved
		// between accounts there, and taking it over here would hand one
		// person's Switchyard account to another.
		if byEmail.OidcSubject != nil {
			return 0, "", fail(CodeToken, "user %d is linked to another provider account", byEmail.ID)
		}
		if err := q.LinkUserOIDC(ctx, db.LinkUserOIDCParams{ID: byEmail.ID, Issuer: &cl.Issuer, Subject: &cl.Subject}); err != nil {
			return 0, "", err
		}
		return byEmail.ID, byEmail.Role, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return 0, "", err
	}
	if !row.AutoProvision {
		return 0, "", fail(CodeNotProvisioned, "no user for %s and auto-provisioning is off", cl.Email)
	}
	role := auth.RoleViewer
	if inAny(cl.Groups, row.AdminGroups) {
		role = auth.RoleAdmin
	}
	id, err := q.CreateSSOUser(ctx, db.CreateSSOUserParams{Name: cl.Name, Email: cl.Email, Role: role, Issuer: &cl.Issuer, Subject: &cl.Subject})
	if err != nil {
		return 0, "", store.AdaptError(err)
	}
	return id, role, nil
}

// applyAdminGroups makes members of an admin group workspace admins and
// takes admin from everyone else, when admin groups are configured. It never
// takes admin from the last active admin: that would lock the workspace out
// of its own settings, so the sign-in keeps them admin and logs it.
func (s *Service) applyAdminGroups(ctx context.Context, q *db.Queries, row db.WorkspaceSso, cl claims, userID int64, role string) error {
	if len(row.AdminGroups) == 0 {
		return nil
	}
	want := auth.RoleViewer
	if inAny(cl.Groups, row.AdminGroups) {
		want = auth.RoleAdmin
	}
	if want == role || (want != auth.RoleAdmin && role != auth.RoleAdmin) {
		return nil
	}
	if role == auth.RoleAdmin {
		n, err := q.CountWorkspaceAdmins(ctx)
		if err != nil {
			return err
		}
		if n <= 1 {
			s.logger.WarnContext(ctx, "sso sign-in kept the last workspace admin", "user_id", userID)
			return nil
		}
	}
	return q.SetUserRole(ctx, db.SetUserRoleParams{ID: userID, Role: want})
}

// applyGroupMappings sets the user's mapping-made memberships: the highest
// mapped role per project, and none where no group of theirs maps any more.
// Memberships made by hand are never changed.
func applyGroupMappings(ctx context.Context, q *db.Queries, row db.WorkspaceSso, cl claims, userID int64) error {
	var mappings []GroupMapping
	if err := json.Unmarshal(row.GroupMappings, &mappings); err != nil {
		return fmt.Errorf("decode group mappings: %w", err)
	}
	want := map[uuid.UUID]string{}
	for _, m := range mappings {
		if slices.Contains(cl.Groups, m.Group) && roleRank[m.Role] > roleRank[want[m.ProjectID]] {
			want[m.ProjectID] = m.Role
		}
	}
	have, err := q.ListSSOMemberships(ctx, userID)
	if err != nil {
		return err
	}
	for _, m := range have {
		if _, ok := want[m.ProjectID]; !ok && m.Source == "sso" {
			if err := q.RemoveSSOMembership(ctx, db.RemoveSSOMembershipParams{ProjectID: m.ProjectID, UserID: userID}); err != nil {
				return err
			}
		}
	}
	ids, err := q.ListProjectIDs(ctx)
	if err != nil {
		return err
	}
	for pid, role := range want {
		if !slices.Contains(ids, pid) {
			continue // a mapped project deleted since
		}
		if err := q.UpsertSSOMembership(ctx, db.UpsertSSOMembershipParams{ProjectID: pid, UserID: userID, Role: role}); err != nil {
			return err
		}
	}
	return nil
}

func inAny(groups, of []string) bool {
	for _, g := range groups {
		if slices.Contains(of, g) {
			return true
		}
	}
	return false
}
