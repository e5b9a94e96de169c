package sso

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/groupsync"
	"github.com/switchyard/switchyard/server/store"
)

// applySignIn finds, links or provisions the user of cl, records the
// claim's groups and applies admin groups and group mappings to the user's
// groups (the claim's and their SCIM groups'), inside the sign-in's
// transaction: a failure keeps none of it (docs/sso.md, What a sign-in
// does). Each change, and the sign-in itself (auth.login), is an audit
// entry of that transaction by the actor sso: the user, with the address
// the provider gave.
func (s *Service) applySignIn(ctx context.Context, q *db.Queries, row db.WorkspaceSso, cl claims) (int64, error) {
	rules, err := groupsync.RulesOf(row)
	if err != nil {
		return 0, err
	}
	// The workspace lock before the user's row, as for every change that
	// may take a workspace admin away (groupsync.Rules.Apply).
	if err := q.LockWorkspace(ctx); err != nil {
		return 0, fmt.Errorf("lock workspace: %w", store.AdaptError(err))
	}
	userID, err := s.findOrCreate(ctx, q, row, rules, cl)
	if err != nil {
		return 0, err
	}
	ctx = asUser(ctx, userID, cl.Email)
	groups := cl.Groups
	if groups == nil {
		groups = []string{}
	}
	if err := q.SetUserSSOGroups(ctx, db.SetUserSSOGroupsParams{ID: userID, Groups: groups}); err != nil {
		return 0, fmt.Errorf("store sso groups: %w", store.AdaptError(err))
	}
	res, err := rules.Apply(ctx, q, s.trail, userID)
	if err != nil {
		return 0, err
	}
	for _, id := range res.KeptAdmins {
		s.logger.WarnContext(ctx, "sso sign-in kept the last workspace admin", "user_id", id)
	}
	login := audit.Change{Action: "auth.login", Resource: authResource(userID, cl.Email), After: map[string]string{"method": "sso"}}
	if err := s.trail.Record(ctx, q, login); err != nil {
		return 0, err
	}
	return userID, nil
}

// findOrCreate: by the provider's subject first, then by email (linking the
// account: user.updated), then a new user when auto-provisioning is on
// (user.created): a workspace admin when the claim names an admin group,
// else a viewer.
func (s *Service) findOrCreate(ctx context.Context, q *db.Queries, row db.WorkspaceSso, rules groupsync.Rules, cl claims) (int64, error) {
	u, err := q.GetUserByOIDCSubject(ctx, db.GetUserByOIDCSubjectParams{Issuer: &cl.Issuer, Subject: &cl.Subject})
	switch {
	case err == nil:
		if !u.Active {
			return 0, fail(CodeDeactivated, "user %d is deactivated", u.ID)
		}
		return u.ID, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return 0, err
	}
	byEmail, err := q.GetUserByEmailForUpdate(ctx, cl.Email)
	switch {
	case err == nil:
		if !byEmail.Active {
			return 0, fail(CodeDeactivated, "user %d is deactivated", byEmail.ID)
		}
		// Linked to another account of the provider: the email moved
		// between accounts there, and taking it over here would hand one
		// person's Switchyard account to another.
		if byEmail.OidcSubject != nil {
			return 0, fail(CodeToken, "user %d is linked to another provider account", byEmail.ID)
		}
		before, err := groupsync.LockUser(ctx, q, byEmail.ID)
		if err != nil {
			return 0, err
		}
		if err := q.LinkUserOIDC(ctx, db.LinkUserOIDCParams{ID: byEmail.ID, Issuer: &cl.Issuer, Subject: &cl.Subject}); err != nil {
			return 0, err
		}
		after := before
		after.SSOLinked = true
		if err := groupsync.RecordUser(asUser(ctx, byEmail.ID, cl.Email), q, s.trail, "user.updated", &before, &after); err != nil {
			return 0, err
		}
		return byEmail.ID, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return 0, err
	}
	if !row.AutoProvision {
		return 0, fail(CodeNotProvisioned, "no user for %s and auto-provisioning is off", cl.Email)
	}
	role := auth.RoleViewer
	if rules.IsAdmin(cl.Groups) {
		role = auth.RoleAdmin
	}
	id, err := q.CreateSSOUser(ctx, db.CreateSSOUserParams{Name: cl.Name, Email: cl.Email, Role: role, Issuer: &cl.Issuer, Subject: &cl.Subject})
	if err != nil {
		return 0, store.AdaptError(err)
	}
	created, err := groupsync.LockUser(ctx, q, id)
	if err != nil {
		return 0, err
	}
	return id, groupsync.RecordUser(asUser(ctx, id, cl.Email), q, s.trail, "user.created", nil, &created)
}

// asUser returns ctx naming the signing-in user as the actor of what is
// recorded under it: single sign-on, on their behalf.
func asUser(ctx context.Context, id int64, email string) context.Context {
	return audit.WithActor(ctx, audit.Actor{Kind: audit.ActorSSO, ID: audit.Str(strconv.FormatInt(id, 10)), Email: audit.Str(email)})
}
