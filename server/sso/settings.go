package sso

import (
	"context"
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

// Settings are the stored settings as the API shows them: never the secret.
type Settings struct {
	Issuer              string
	ClientID            string
	ClientSecretSet     bool
	Scopes              []string
	GroupsClaim         string
	AllowedEmailDomains []string
	AutoProvision       bool
	GroupMappings       []GroupMapping
	AdminGroups         []string
	PasswordLogin       string
	RedirectURI         string
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
// learns of a typo now, not at the first sign-in (docs/sso.md).
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
		return q.UpsertWorkspaceSSO(ctx, params)
	})
	if err != nil {
		return Settings{}, fmt.Errorf("put sso settings: %w", err)
	}
	s.forget(row.Issuer)
	// The audit log is kept per environment, and these settings belong to
	// none: the change is logged instead, without the secret.
	s.logger.InfoContext(ctx, "sso settings changed", "actor_email", p.Email, "issuer", row.Issuer,
		"client_id", row.ClientID, "password_login", row.PasswordLogin, "auto_provision", row.AutoProvision)
	return s.settings(row)
}

// validate applies the defaults and checks what the schema cannot.
func (s *Service) validate(in SettingsInput) (db.UpsertWorkspaceSSOParams, error) {
	var probs apperr.Problems
	issuer := strings.TrimRight(strings.TrimSpace(in.Issuer), "/")
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
	issuer = strings.TrimRight(strings.TrimSpace(issuer), "/")
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
// go-oidc refuses a document whose issuer is not the one asked for.
func (s *Service) discover(ctx context.Context, issuer string) (Discovery, error) {
	bad := func(err error) (Discovery, error) {
		e := apperr.Wrap(apperr.Invalid, "issuer: the provider's discovery document or keys cannot be fetched, or name another issuer", err)
		e.Details = []apperr.Detail{{Field: "issuer", Message: "discovery failed: " + err.Error()}}
		return Discovery{}, e
	}
	p, err := oidc.NewProvider(s.providerCtx(ctx), issuer)
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

// Delete turns single sign-on off (workspace admin).
func (s *Service) Delete(ctx context.Context, p *auth.Principal) error {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return err
	}
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		_, err := q.DeleteWorkspaceSSO(ctx)
		return err
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
