package sso

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/groupsync"
	"github.com/switchyard/switchyard/server/store"
)

// Password-login policies (docs/sso.md, Password sign-in).
const (
	PasswordLoginEnabled    = "enabled"
	PasswordLoginAdminsOnly = "admins_only"
)

// GroupMapping gives the members of an identity-provider group a role in a
// project. Sign-ins and SCIM apply mappings alike (groupsync).
type GroupMapping = groupsync.Mapping

// SettingsInput is PUT /api/workspace/sso's body; nil fields take their
// defaults.
type SettingsInput struct {
	Issuer              string
	ClientID            string
	ClientSecret        string
	Scopes              []string
	GroupsClaim         *string
	AllowedEmailDomains []string
	AutoProvision       *bool
	GroupMappings       []GroupMapping
	AdminGroups         []string
	PasswordLogin       *string
}

// Settings are the stored settings as the API shows them (GET
// /api/workspace/sso), never the secret: also what the audit trail records
// before and after a change.
type Settings struct {
	Issuer              string         `json:"issuer"`
	ClientID            string         `json:"client_id"`
	ClientSecretSet     bool           `json:"client_secret_set"`
	Scopes              []string       `json:"scopes"`
	GroupsClaim         string         `json:"groups_claim"`
	AllowedEmailDomains []string       `json:"allowed_email_domains"`
	AutoProvision       bool           `json:"auto_provision"`
	GroupMappings       []GroupMapping `json:"group_mappings"`
	AdminGroups         []string       `json:"admin_groups"`
	PasswordLogin       string         `json:"password_login"`
	RedirectURI         string         `json:"redirect_uri"`
}

// Info is what the sign-in page needs to know.
type Info struct {
	Enabled       bool
	PasswordLogin string
	LoginURL      string
}

var errOff = apperr.E(apperr.NotFound, "single sign-on is not configured")

// Get returns the settings (workspace admin).
func (s *Service) Get(ctx context.Context, p *auth.Principal) (Settings, error) {
	if err := access.RequireWorkspaceAdmin(p, access.AdminRead); err != nil {
		return Settings{}, err
	}
	row, err := db.New(s.pool).GetWorkspaceSSO(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return Settings{}, errOff
	}
	if err != nil {
		return Settings{}, fmt.Errorf("get sso settings: %w", err)
	}
	return s.settings(row)
}

func (s *Service) settings(row db.WorkspaceSso) (Settings, error) {
	var mappings []GroupMapping
	if err := json.Unmarshal(row.GroupMappings, &mappings); err != nil {
		return Settings{}, fmt.Errorf("decode group mappings: %w", err)
	}
	if mappings == nil {
		mappings = []GroupMapping{}
	}
	return Settings{
		Issuer: row.Issuer, ClientID: row.ClientID, ClientSecretSet: len(row.ClientSecretSealed) > 0,
		Scopes: row.Scopes, GroupsClaim: row.GroupsClaim, AllowedEmailDomains: row.AllowedEmailDomains,
		AutoProvision: row.AutoProvision, GroupMappings: mappings, AdminGroups: row.AdminGroups,
		PasswordLogin: row.PasswordLogin, RedirectURI: s.RedirectURI(),
	}, nil
}

// Put stores the settings (workspace admin) after checking that the issuer
// serves a discovery document naming itself and a key set: an administrator
// learns of a typo now, not at the first sign-in (docs/sso.md). The change
// is an audit entry in the same transaction: sso.created or sso.updated,
// before and after as GET shows them; a PUT that changes nothing, the
// secret included, records nothing.
func (s *Service) Put(ctx context.Context, p *auth.Principal, in SettingsInput) (Settings, error) {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return Settings{}, err
	}
	params, err := s.validate(in)
	if err != nil {
		return Settings{}, err
	}
	if _, err := s.discover(ctx, params.Issuer); err != nil {
		return Settings{}, err
	}
	row, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.WorkspaceSso, error) {
		var mappings []GroupMapping
		_ = json.Unmarshal(params.GroupMappings, &mappings)
		ids, err := q.ListProjectIDs(ctx)
		if err != nil {
			return db.WorkspaceSso{}, err
		}
		var probs apperr.Problems
		for i, m := range mappings {
			if !slices.Contains(ids, m.ProjectID) {
				probs.Add(fmt.Sprintf("group_mappings[%d].project_id", i), "no such project")
			}
		}
		if err := probs.Err(); err != nil {
			return db.WorkspaceSso{}, err
		}
		// The workspace lock orders concurrent writes of the settings, so
		// that each entry's before is what the write replaced.
		if err := q.LockWorkspace(ctx); err != nil {
			return db.WorkspaceSso{}, err
		}
		prev, err := q.GetWorkspaceSSO(ctx)
		had := err == nil
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return db.WorkspaceSso{}, err
		}
		row, err := q.UpsertWorkspaceSSO(ctx, params)
		if err != nil {
			return db.WorkspaceSso{}, err
		}
		after, err := s.settings(row)
		if err != nil {
			return db.WorkspaceSso{}, err
		}
		c := audit.Change{Action: "sso.created", Resource: ssoResource, After: after}
		if had {
			before, err := s.settings(prev)
			if err != nil {
				return db.WorkspaceSso{}, err
			}
			if sameJSON(before, after) && s.sameSecret(prev, in.ClientSecret) {
				return row, nil
			}
			c.Action, c.Before = "sso.updated", before
		}
		return row, s.trail.Record(ctx, q, c)
	})
	if err != nil {
		return Settings{}, fmt.Errorf("put sso settings: %w", err)
	}
	s.forget(row.Issuer)
	s.logger.InfoContext(ctx, "sso settings changed", "actor_email", p.Email, "issuer", row.Issuer,
		"client_id", row.ClientID, "password_login", row.PasswordLogin, "auto_provision", row.AutoProvision)
	return s.settings(row)
}

// ssoResource is the resource of the settings' audit entries: there is one.
var ssoResource = audit.Resource{Type: audit.SSO, ID: "sso"}

// sameJSON reports whether a and b encode alike: whether an entry's before
// and after would be the same.
func sameJSON(a, b any) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// sameSecret reports whether the stored settings row seals secret. A secret
// that cannot be opened (SESSION_SECRET changed) counts as another one.
func (s *Service) sameSecret(row db.WorkspaceSso, secret string) bool {
	old, err := s.secrets.Open(row.ClientSecretSealed)
	return err == nil && subtle.ConstantTimeCompare(old, []byte(secret)) == 1
}

// validate applies the defaults and checks what the schema cannot.
func (s *Service) validate(in SettingsInput) (db.UpsertWorkspaceSSOParams, error) {
	var probs apperr.Problems
	// As given, a trailing slash included: OpenID Connect compares issuers
	// as exact strings (docs/sso.md, The issuer).
	issuer := strings.TrimSpace(in.Issuer)
	if !validIssuer(issuer) {
		probs.Add("issuer", "must be an http or https URL without query or fragment")
	}
	if strings.TrimSpace(in.ClientID) == "" {
		probs.Add("client_id", "must not be empty")
	}
	if in.ClientSecret == "" {
		probs.Add("client_secret", "must not be empty")
	}
	scopes := in.Scopes
	if scopes == nil {
		scopes = []string{"openid", "email", "profile"}
	}
	if !slices.Contains(scopes, "openid") {
		probs.Add("scopes", "must include openid")
	}
	groupsClaim := "groups"
	if in.GroupsClaim != nil {
		groupsClaim = *in.GroupsClaim
	}
	domains := make([]string, 0, len(in.AllowedEmailDomains))
	for i, d := range in.AllowedEmailDomains {
		d = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		if d == "" || strings.ContainsAny(d, "@ /") {
			probs.Add(fmt.Sprintf("allowed_email_domains[%d]", i), "must be a domain name")
		}
		domains = append(domains, d)
	}
	auto := true
	if in.AutoProvision != nil {
		auto = *in.AutoProvision
	}
	mappings := in.GroupMappings
	if mappings == nil {
		mappings = []GroupMapping{}
	}
	for i, m := range mappings {
		if !slices.Contains([]string{auth.RoleViewer, auth.RoleEditor, auth.RoleAdmin}, m.Role) {
			probs.Add(fmt.Sprintf("group_mappings[%d].role", i), "must be viewer, editor or admin")
		}
	}
	admins := in.AdminGroups
	if admins == nil {
		admins = []string{}
	}
	policy := PasswordLoginEnabled
	if in.PasswordLogin != nil {
		policy = *in.PasswordLogin
	}
	if policy != PasswordLoginEnabled && policy != PasswordLoginAdminsOnly {
		probs.Add("password_login", "must be enabled or admins_only")
	}
	if err := probs.Err(); err != nil {
		return db.UpsertWorkspaceSSOParams{}, err
	}
	sealed, err := s.secrets.Seal([]byte(in.ClientSecret))
	if err != nil {
		return db.UpsertWorkspaceSSOParams{}, err
	}
	rawMappings, err := json.Marshal(mappings)
	if err != nil {
		return db.UpsertWorkspaceSSOParams{}, err
	}
	return db.UpsertWorkspaceSSOParams{
		Issuer: issuer, ClientID: strings.TrimSpace(in.ClientID), ClientSecretSealed: sealed, Scopes: scopes,
		GroupsClaim: groupsClaim, AllowedEmailDomains: domains, AutoProvision: auto, GroupMappings: rawMappings,
		AdminGroups: admins, PasswordLogin: policy,
	}, nil
}

// Discovery is what a provider's discovery document and key set say.
type Discovery struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	UserinfoEndpoint      string `json:"userinfo_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
	SigningKeys           int    `json:"-"`
}

// Test fetches an issuer's discovery document and keys the way Put does,
// and stores nothing: the dashboard's "test connection" (workspace admin).
func (s *Service) Test(ctx context.Context, p *auth.Principal, issuer string) (Discovery, error) {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return Discovery{}, err
	}
	issuer = strings.TrimSpace(issuer)
	if !validIssuer(issuer) {
		var probs apperr.Problems
		probs.Add("issuer", "must be an http or https URL without query or fragment")
		return Discovery{}, probs.Err()
	}
	return s.discover(ctx, issuer)
}

func validIssuer(issuer string) bool {
	u, err := url.Parse(issuer)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.RawQuery == "" && u.Fragment == ""
}

// discover fetches the discovery document and the key set it names.
// go-oidc fetches the document at the issuer, less a trailing slash,
// followed by /.well-known/openid-configuration (OpenID Connect Discovery
// 1.0, section 4), and refuses a document whose issuer is not the one asked
// for, byte for byte, as ID tokens are checked later. A document whose
// issuer differs only by a trailing slash names the issuer to use instead:
// that is the usual mistake (every Auth0 tenant's issuer ends with one).
func (s *Service) discover(ctx context.Context, issuer string) (Discovery, error) {
	bad := func(err error) (Discovery, error) {
		e := apperr.Wrap(apperr.Invalid, "issuer: the provider's discovery document or keys cannot be fetched, or name another issuer", err)
		e.Details = []apperr.Detail{{Field: "issuer", Message: "discovery failed: " + err.Error()}}
		return Discovery{}, e
	}
	p, err := oidc.NewProvider(s.providerCtx(ctx), issuer)
	var mismatch *oidc.IssuerMismatchError
	if errors.As(err, &mismatch) && strings.TrimSuffix(mismatch.Discovered, "/") == strings.TrimSuffix(issuer, "/") {
		msg := fmt.Sprintf("the provider names itself %q — use that", mismatch.Discovered)
		e := apperr.Wrap(apperr.Invalid, "issuer: "+msg, err)
		e.Details = []apperr.Detail{{Field: "issuer", Message: msg}}
		return Discovery{}, e
	}
	if err != nil {
		return bad(err)
	}
	var doc Discovery
	if err := p.Claims(&doc); err != nil || doc.JWKSURI == "" {
		return bad(errors.New("no jwks_uri"))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, doc.JWKSURI, nil)
	if err != nil {
		return bad(err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return bad(err)
	}
	defer resp.Body.Close()
	var keys struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if resp.StatusCode != http.StatusOK {
		return bad(fmt.Errorf("keys: status %d", resp.StatusCode))
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&keys); err != nil || len(keys.Keys) == 0 {
		return bad(errors.New("keys: no key set"))
	}
	doc.SigningKeys = len(keys.Keys)
	return doc, nil
}

// Delete turns single sign-on off (workspace admin), recording sso.deleted
// with the settings it removed.
func (s *Service) Delete(ctx context.Context, p *auth.Principal) error {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return err
	}
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		if err := q.LockWorkspace(ctx); err != nil {
			return err
		}
		prev, err := q.GetWorkspaceSSO(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // already off: nothing changes, nothing to record
		}
		if err != nil {
			return err
		}
		before, err := s.settings(prev)
		if err != nil {
			return err
		}
		if _, err := q.DeleteWorkspaceSSO(ctx); err != nil {
			return err
		}
		return s.trail.Record(ctx, q, audit.Change{Action: "sso.deleted", Resource: ssoResource, Before: before})
	})
	if err != nil {
		return fmt.Errorf("delete sso settings: %w", err)
	}
	s.logger.InfoContext(ctx, "sso settings deleted", "actor_email", p.Email)
	return nil
}

// Info says whether single sign-on is on; no credential needed.
func (s *Service) Info(ctx context.Context) (Info, error) {
	row, err := db.New(s.pool).GetWorkspaceSSO(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return Info{PasswordLogin: PasswordLoginEnabled}, nil
	}
	if err != nil {
		return Info{}, fmt.Errorf("sso info: %w", err)
	}
	return Info{Enabled: true, PasswordLogin: row.PasswordLogin, LoginURL: LoginPath}, nil
}
