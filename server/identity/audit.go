package identity

import (
	"cmp"
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/groupsync"
)

// Every write of identity is an entry of the workspace audit trail, recorded
// in the write's own transaction: the entry commits with the change or not at
// all. An entry's before and after are the resource as the API shows it,
// never a secret: an SDK key or a token by its prefix, a user without their
// password hash. The states below are those representations.

// firstBoot is the actor of what the first boot creates.
var firstBoot = audit.Actor{Kind: audit.ActorSystem, Label: audit.Str("first boot")}

// projectState is a project as the API shows it, without the SDK key that
// only the answer to its creation carries.
type projectState struct {
	ID               uuid.UUID            `json:"id"`
	Name             string               `json:"name"`
	Slug             string               `json:"slug"`
	EnvironmentCount int64                `json:"environment_count"`
	MemberCount      int64                `json:"member_count"`
	CreatedAt        time.Time            `json:"created_at"`
	Environments     []environmentSummary `json:"environments"`
}

// environmentSummary is an environment as a project shows it.
type environmentSummary struct {
	ID              uuid.UUID `json:"id"`
	Name            string    `json:"name"`
	Slug            string    `json:"slug"`
	Color           string    `json:"color"`
	IsDefault       bool      `json:"is_default"`
	RequireApproval bool      `json:"require_approval"`
}

func projectView(p ProjectDetail) projectState {
	envs := make([]environmentSummary, len(p.Environments))
	for i, e := range p.Environments {
		envs[i] = environmentSummary{ID: e.ID, Name: e.Name, Slug: e.Slug, Color: e.Color, IsDefault: e.IsDefault, RequireApproval: e.RequireApproval}
	}
	return projectState{
		ID: p.ID, Name: p.Name, Slug: p.Slug, EnvironmentCount: p.EnvironmentCount, MemberCount: p.MemberCount,
		CreatedAt: p.CreatedAt.UTC(), Environments: envs,
	}
}

// environmentState is an environment with every setting, as the API shows it.
type environmentState struct {
	ID              uuid.UUID `json:"id"`
	ProjectID       uuid.UUID `json:"project_id"`
	Name            string    `json:"name"`
	Slug            string    `json:"slug"`
	Color           string    `json:"color"`
	IsDefault       bool      `json:"is_default"`
	RequireApproval bool      `json:"require_approval"`
	CreatedAt       time.Time `json:"created_at"`
}

func environmentView(e db.Environment) environmentState {
	return environmentState{
		ID: e.ID, ProjectID: e.ProjectID, Name: e.Name, Slug: e.Slug, Color: e.Color,
		IsDefault: e.IsDefault, RequireApproval: e.RequireApproval, CreatedAt: e.CreatedAt.UTC(),
	}
}

// sdkKeyState is an SDK key as the list of keys shows it: by prefix, never
// its value.
type sdkKeyState struct {
	ID              int64     `json:"id"`
	Name            string    `json:"name"`
	Kind            string    `json:"kind"`
	Prefix          string    `json:"prefix"`
	EnvironmentID   uuid.UUID `json:"environment_id"`
	EnvironmentName string    `json:"environment_name"`
	CreatedAt       time.Time `json:"created_at"`
}

// sdkKeyListing is a key just created, in envName, as the list of keys
// shows it.
func sdkKeyListing(k db.SDKKey, envName string) sdkKeyState {
	return sdkKeyState{
		ID: k.ID, Name: k.Name, Kind: k.Kind, Prefix: k.Prefix, EnvironmentID: k.EnvironmentID,
		EnvironmentName: envName, CreatedAt: k.CreatedAt.UTC(),
	}
}

// memberState is a project membership as the API shows it; the one type
// every writer of member entries records.
type memberState = groupsync.Member

func memberView(m db.ListMembersRow) memberState {
	return memberState{UserID: m.UserID, Name: m.Name, Email: m.Email, Role: m.Role}
}

// userState is a workspace user as the API shows it (never the password
// hash); the one type every writer of user entries records.
type userState = groupsync.User

func userView(u db.ListUsersRow) userState {
	return userState{ID: u.ID, Name: u.Name, Email: u.Email, Role: u.Role, Active: u.Active, SSOLinked: u.SsoLinked, CreatedAt: u.CreatedAt.UTC()}
}

// tokenState is a personal access token as the list of tokens shows it: by
// prefix, never its value.
type tokenState struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Scope      string     `json:"scope"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
}

func tokenView(t db.PersonalAccessToken) tokenState {
	return tokenState{
		ID: t.ID, Name: t.Name, Prefix: t.Prefix, Scope: t.Scope, CreatedAt: t.CreatedAt.UTC(),
		LastUsedAt: utc(t.LastUsedAt), ExpiresAt: utc(t.ExpiresAt),
	}
}

// workspaceState is the workspace as GET /api/auth/workspace shows it.
type workspaceState struct {
	WorkspaceName   string `json:"workspace_name"`
	IsSetupComplete bool   `json:"is_setup_complete"`
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// withStates sets c's before and after to the views of before and after,
// nil for none.
func withStates[T, V any](c audit.Change, before, after *T, view func(T) V) audit.Change {
	if before != nil {
		c.Before = view(*before)
	}
	if after != nil {
		c.After = view(*after)
	}
	return c
}

// same is the view of a state that is its own view.
func same[T any](v T) T { return v }

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// recorder writes identity's entries of the workspace audit trail, each in
// the caller's transaction (docs/audit.md).
type recorder struct{ trail *audit.Trail }

// recordProject records a change of a project (before or after nil for
// none).
func (r recorder) recordProject(ctx context.Context, q *db.Queries, action string, before, after *ProjectDetail) error {
	p := cmp.Or(after, before)
	c := audit.Change{
		Action:    action,
		Resource:  audit.Resource{Type: audit.Project, ID: p.ID.String(), Key: audit.Str(p.Slug), Name: audit.Str(p.Name)},
		ProjectID: audit.ID(p.ID),
	}
	return r.trail.Record(ctx, q, withStates(c, before, after, projectView))
}

// recordEnvironment records a change of an environment's settings.
func (r recorder) recordEnvironment(ctx context.Context, q *db.Queries, action string, before, after *db.Environment) error {
	e := cmp.Or(after, before)
	c := audit.Change{
		Action:        action,
		Resource:      audit.Resource{Type: audit.Environment, ID: e.ID.String(), Key: audit.Str(e.Slug), Name: audit.Str(e.Name)},
		ProjectID:     audit.ID(e.ProjectID),
		EnvironmentID: audit.ID(e.ID),
	}
	return r.trail.Record(ctx, q, withStates(c, before, after, environmentView))
}

// recordSDKKey records an SDK key created (after) or revoked (before) in
// project.
func (r recorder) recordSDKKey(ctx context.Context, q *db.Queries, action string, project uuid.UUID, before, after *sdkKeyState) error {
	k := cmp.Or(after, before)
	c := audit.Change{
		Action:        action,
		Resource:      audit.Resource{Type: audit.SDKKey, ID: itoa(k.ID), Name: audit.Str(k.Name)},
		ProjectID:     audit.ID(project),
		EnvironmentID: audit.ID(k.EnvironmentID),
	}
	return r.trail.Record(ctx, q, withStates(c, before, after, same[sdkKeyState]))
}

// recordMember records a change of a membership of project; the resource's
// id is the user's.
func (r recorder) recordMember(ctx context.Context, q *db.Queries, action string, project uuid.UUID, before, after *db.ListMembersRow) error {
	m := cmp.Or(after, before)
	c := audit.Change{
		Action:    action,
		Resource:  audit.Resource{Type: audit.Member, ID: itoa(m.UserID), Name: audit.Str(m.Name)},
		ProjectID: audit.ID(project),
	}
	return r.trail.Record(ctx, q, withStates(c, before, after, memberView))
}

// recordUser records a change of a workspace user.
func (r recorder) recordUser(ctx context.Context, q *db.Queries, action string, before, after *db.ListUsersRow) error {
	u := cmp.Or(after, before)
	c := audit.Change{Action: action, Resource: audit.Resource{Type: audit.User, ID: itoa(u.ID), Name: audit.Str(u.Name)}}
	return r.trail.Record(ctx, q, withStates(c, before, after, userView))
}

// recordToken records a personal access token created (after) or revoked
// (before).
func (r recorder) recordToken(ctx context.Context, q *db.Queries, action string, before, after *db.PersonalAccessToken) error {
	t := cmp.Or(after, before)
	c := audit.Change{Action: action, Resource: audit.Resource{Type: audit.Token, ID: itoa(t.ID), Name: audit.Str(t.Name)}}
	return r.trail.Record(ctx, q, withStates(c, before, after, tokenView))
}

// recordWorkspace records a change of the workspace.
func (r recorder) recordWorkspace(ctx context.Context, q *db.Queries, action string, before, after *workspaceState) error {
	w := cmp.Or(after, before)
	c := audit.Change{Action: action, Resource: audit.Resource{Type: audit.Workspace, ID: "workspace", Name: audit.Str(w.WorkspaceName)}}
	return r.trail.Record(ctx, q, withStates(c, before, after, same[workspaceState]))
}

// recordAuth records a security event (auth.login, auth.login_failed,
// auth.locked, auth.setup) by actor; its resource is the user when known,
// else the address tried.
func (r recorder) recordAuth(ctx context.Context, q *db.Queries, action string, actor audit.Actor, userID int64, email string, after any) error {
	id := email
	if userID != 0 {
		id = itoa(userID)
	}
	return r.trail.Record(ctx, q, audit.Change{Action: action, Resource: audit.Resource{Type: audit.Auth, ID: id}, Actor: &actor, After: after})
}

// userActor names a user as the actor of their own sign-in or setup.
func userActor(id int64, email string) audit.Actor {
	return audit.Actor{Kind: audit.ActorUser, ID: audit.Str(itoa(id)), Email: audit.Str(email)}
}
