package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Kind tells what authenticated a request.
type Kind int

// The kinds of principal.
const (
	KindUser   Kind = iota + 1 // a user, by session cookie or personal access token
	KindSDKKey                 // an SDK key, bound to one environment
)

// Credentials are what a request presented: an Authorization bearer value
// and a session cookie value. Bearer wins when both are present.
type Credentials struct {
	Bearer string
	Cookie string
}

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
	// TokenPrefix is that token's display prefix: the audit trail names
	// which of a user's tokens acted by it.
	TokenPrefix string
	ReadOnly    bool // a read_only token: reads only (docs/reference/identity.md, Personal access tokens)

	// SDK keys. KeyID is 0 for the legacy SDK_KEY, which has no stored record.
	// Client is set for a client key (pk_live_), which may only evaluate
	// client-side flags and report exposures (docs/reference/identity.md,
	// Client keys).
	Client        bool
	KeyID         int64
	KeyPrefix     string
	ProjectID     uuid.UUID
	EnvironmentID uuid.UUID
}

// WorkspaceAdmin reports whether p is a user whose workspace role is admin.
// A workspace role counts only as admin or not (docs/reference/identity.md,
// Roles).
func (p *Principal) WorkspaceAdmin() bool { return p.Kind == KindUser && p.Role == RoleAdmin }

// ViaCookie reports whether a browser session cookie authenticated p, which
// makes its state-changing requests subject to the CSRF header rule.
func (p *Principal) ViaCookie() bool { return p.SessionID != nil }

// Actor names p in audit entries and notifications: the user's email, or
// sdk:<prefix> for an SDK key (docs/reference/identity.md, Server SDK keys).
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

// Credential references name what a revocation ends, in the change log
// (migrations/00007_credential_log.sql writes them) and on the bus:
// "sdk_key:<id>", "token:<id>", "session:<hex SHA-256 of the session id>" and
// "user:<id>", which ends everything a user holds.
const (
	refSDKKey  = "sdk_key:"
	refToken   = "token:"
	refSession = "session:"
	refUser    = "user:"
)

// SDKKeyRef is the credential reference of an SDK key.
func SDKKeyRef(id int64) string { return refSDKKey + strconv.FormatInt(id, 10) }

// ParseSDKKeyRef returns the SDK key id a reference names, if it names one.
func ParseSDKKeyRef(ref string) (int64, bool) {
	rest, ok := strings.CutPrefix(ref, refSDKKey)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// RevokedRef returns the credential reference (SDKKeyRef and friends) that
// key, the Key of an OpRevoke event, names. A bare number is an SDK key id,
// as instances before migration 00007 wrote and published them.
func RevokedRef(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	if id, err := strconv.ParseInt(key, 10, 64); err == nil {
		return SDKKeyRef(id), true
	}
	return key, true
}

// CredentialRefs lists the references whose revocation ends what p
// authenticated: a stream registers them, so that the revocation of any one
// ends it. The legacy SDK_KEY has none: it ends only with a restart.
func (p *Principal) CredentialRefs() []string {
	switch {
	case p.Kind == KindSDKKey && p.KeyID != 0:
		return []string{SDKKeyRef(p.KeyID)}
	case p.Kind != KindUser:
		return nil
	}
	refs := []string{refUser + strconv.FormatInt(p.UserID, 10)}
	if p.SessionID != nil {
		sum := sha256.Sum256(p.SessionID)
		refs = append(refs, refSession+hex.EncodeToString(sum[:]))
	}
	if p.TokenID != 0 {
		refs = append(refs, refToken+strconv.FormatInt(p.TokenID, 10))
	}
	return refs
}
