package auth

import (
	"context"

	"github.com/google/uuid"
)

// Kind tells what authenticated a request.
type Kind int

// The kinds of principal.
const (
	KindUser   Kind = iota + 1 // a user, by session cookie or personal access token
	KindSDKKey                 // an SDK key, bound to one environment
)

// Principal is who is making a request, resolved once per request by the
// authentication middleware and re-read from the database every time, so
// role changes, deletions and revocations apply to the very next request.
type Principal struct {
	Kind Kind

	// Users (session cookie or personal access token).
	UserID    int64
	Email     string
	Name      string
	Role      string // workspace role: admin, editor or viewer
	SessionID []byte // set when a session cookie authenticated the request
	TokenID   int64  // set when a personal access token authenticated it
	ReadOnly  bool   // a read_only token: reads only (spec, Authentication rule 6)

	// SDK keys. KeyID is 0 for the legacy SDK_KEY, which has no stored record.
	KeyID         int64
	KeyPrefix     string
	ProjectID     uuid.UUID
	EnvironmentID uuid.UUID
}

// WorkspaceAdmin reports whether p is a user whose workspace role is admin.
// decisions.md: a workspace role counts only as admin or not.
func (p *Principal) WorkspaceAdmin() bool { return p.Kind == KindUser && p.Role == RoleAdmin }

// ViaCookie reports whether a browser session cookie authenticated p, which
// makes its state-changing requests subject to the CSRF header rule.
func (p *Principal) ViaCookie() bool { return p.SessionID != nil }

// Actor names p in audit entries and notifications: the user's email, or
// sdk:<prefix> for an SDK key (decisions.md).
func (p *Principal) Actor() string {
	if p.Kind == KindSDKKey {
		return "sdk:" + p.KeyPrefix
	}
	return p.Email
}

// Roles, workspace-wide and per project.
const (
	RoleAdmin  = "admin"
	RoleEditor = "editor"
	RoleViewer = "viewer"
)

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of ctx, or nil for an anonymous request.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
