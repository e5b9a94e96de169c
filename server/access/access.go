// Package access is the one decision of who may do what: a principal's
// project role, key kind and token mode against what an operation needs.
// Identity (identity), flags and governance (core), notifications (notify)
// and measurement (measure) all ask it, and so does the stream handler.
package access

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
)

// Need is the access an operation requires (docs/reference/identity.md,
// Roles): a project role and whether the operation writes. read_only tokens
// may do every read their owner's role allows (docs/reference/identity.md,
// Personal access tokens), so the two are separate.
type Need int

// The needs.
const (
	Read       Need = iota + 1 // any project member reads: flags, impressions, …
	Write                      // editor or admin writes: flags, segments, experiments, schedules
	AdminRead                  // project admin reads: listing keys, members, environments
	Admin                      // project admin writes: environments, SDK keys, members, webhooks, chat
	Ingest                     // report impressions and goal events: any reader, client keys too
	EditorRead                 // editor or admin reads: the raw export of impressions and goal events
)

// writes reports whether the operation changes anything.
func (n Need) writes() bool { return n == Write || n == Admin }

// roleGrants reports whether a project role satisfies need.
func roleGrants(role string, need Need) bool {
	switch role {
	case auth.RoleAdmin:
		return true
	case auth.RoleEditor:
		return need == Read || need == Ingest || need == Write || need == EditorRead
	case auth.RoleViewer:
		return need == Read || need == Ingest
	}
	return false
}

// The refusals; identity, core and measure return ErrEnvNotFound and
// ErrReadOnly themselves too.
var (
	ErrEnvNotFound = apperr.E(apperr.NotFound, "environment not found")
	errNoPrincipal = apperr.E(apperr.Unauthenticated, "authentication required")
	ErrReadOnly    = apperr.E(apperr.Forbidden, "this token is read-only")
	errRole        = apperr.E(apperr.Forbidden, "your role does not allow this")
	errClientKey   = apperr.E(apperr.Forbidden, "client keys may only evaluate flags through OFREP and report impressions and events")
)

// Authorize is the one decision of who may do what inside a project: every
// project- and environment-scoped operation ends here. A project the caller
// is not a member of does not exist for them (404); a member whose role is
// too weak gets 403; workspace admins bypass membership; a read_only token
// never writes (docs/reference/identity.md, Not found, not forbidden).
func Authorize(ctx context.Context, q *db.Queries, p *auth.Principal, projectID uuid.UUID, need Need) error {
	if p == nil {
		return errNoPrincipal
	}
	if p.Kind != auth.KindUser {
		return apperr.E(apperr.Forbidden, "SDK keys may only use the routes of their own environment")
	}
	if !p.WorkspaceAdmin() {
		role, err := q.GetMemberRole(ctx, db.GetMemberRoleParams{ProjectID: projectID, UserID: p.UserID})
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.E(apperr.NotFound, "project not found")
		}
		if err != nil {
			return err
		}
		if !roleGrants(role, need) {
			return errRole
		}
	}
	if need.writes() && p.ReadOnly {
		return ErrReadOnly
	}
	return nil
}

// RequireServerKey admits a server SDK key (the stream, the snapshot):
// client keys answer 403 (docs/reference/identity.md, Client keys).
func RequireServerKey(p *auth.Principal) error {
	if p != nil && p.Client {
		return errClientKey
	}
	return nil
}

// Project loads a project the principal may use with need. SDK keys answer
// 403 on project-level routes (docs/reference/identity.md, Server SDK keys).
func Project(ctx context.Context, q *db.Queries, p *auth.Principal, projectID uuid.UUID, need Need) (db.Project, error) {
	if p != nil && p.Kind == auth.KindSDKKey {
		return db.Project{}, apperr.E(apperr.Forbidden, "SDK keys may only use the routes of their own environment")
	}
	if err := Authorize(ctx, q, p, projectID, need); err != nil {
		return db.Project{}, err
	}
	project, err := q.GetProject(ctx, projectID)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Project{}, apperr.E(apperr.NotFound, "project not found")
	}
	return project, err
}

// Env loads an environment the principal may use with need. An SDK key acts
// as an admin of its own environment; any other environment answers 404
// (docs/reference/identity.md, Server SDK keys). A client key may only
// ingest; any other route answers 403, for every environment
// (docs/reference/identity.md, Client keys).
func Env(ctx context.Context, q *db.Queries, p *auth.Principal, envID uuid.UUID, need Need) (db.Environment, error) {
	if p == nil {
		return db.Environment{}, errNoPrincipal
	}
	if p.Client && need != Ingest {
		return db.Environment{}, errClientKey
	}
	if p.Kind == auth.KindSDKKey && p.EnvironmentID != envID {
		return db.Environment{}, apperr.E(apperr.NotFound, "environment not found")
	}
	env, err := q.GetEnvironment(ctx, envID)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Environment{}, apperr.E(apperr.NotFound, "environment not found")
	}
	if err != nil {
		return db.Environment{}, err
	}
	if p.Kind == auth.KindSDKKey {
		return env, nil
	}
	if err := Authorize(ctx, q, p, env.ProjectID, need); err != nil {
		if apperr.KindOf(err) == apperr.NotFound {
			return db.Environment{}, apperr.E(apperr.NotFound, "environment not found")
		}
		return db.Environment{}, err
	}
	return env, nil
}

// RequireWorkspaceAdmin guards workspace-level operations: managing users and
// creating, renaming or deleting projects. need is AdminRead for the
// reads among them, which read_only tokens may do.
func RequireWorkspaceAdmin(p *auth.Principal, need Need) error {
	switch {
	case p == nil:
		return errNoPrincipal
	case p.Kind != auth.KindUser:
		return apperr.E(apperr.Forbidden, "SDK keys may only use the routes of their own environment")
	case !p.WorkspaceAdmin():
		return apperr.E(apperr.Forbidden, "only a workspace admin may do this")
	case need.writes() && p.ReadOnly:
		return ErrReadOnly
	}
	return nil
}

// RequireUser guards the caller's own resources (tokens, the current user).
func RequireUser(p *auth.Principal) error {
	switch {
	case p == nil:
		return errNoPrincipal
	case p.Kind != auth.KindUser:
		return apperr.E(apperr.Forbidden, "this route is for users, not SDK keys")
	}
	return nil
}
