package sso

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/jackc/pgx/v5"
	"golang.org/x/oauth2"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/store"
)

// Failure codes: where a failed sign-in lands, as /login?error=<code>
// (docs/sso.md, Errors).
const (
	CodeState          = "sso_state"
	CodeToken          = "sso_token"
	CodeDomain         = "sso_domain"
	CodeNotProvisioned = "sso_not_provisioned"
	CodeDeactivated    = "sso_deactivated"
)

// Failure is a sign-in that did not succeed: Code goes to the browser, Err
// only to the log.
type Failure struct {
	Code string
	Err  error
}

func (f *Failure) Error() string { return "sso sign-in failed (" + f.Code + "): " + f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

func fail(code string, format string, args ...any) *Failure {
	return &Failure{Code: code, Err: fmt.Errorf(format, args...)}
}

// Sign-in cookie facts: it carries the flow's secrets between the redirect to
// the provider and the callback.
const (
	CookieName     = "lg_sso"
	cookiePath     = "/api/auth/oidc"
	CookieLifetime = 10 * time.Minute
)

// flowState is sealed into the sign-in cookie.
type flowState struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Redirect string    `json:"r"`
	Expires  time.Time `json:"e"`
}

// FlowCookie returns the Set-Cookie value of the sign-in cookie. SameSite is
// Lax, not Strict like the session's: the provider sends the browser back
// with a cross-site top-level navigation, which must carry it. An empty value
// with maxAge < 0 clears it.
func FlowCookie(value string, maxAge time.Duration, secure bool) string {
	c := &http.Cookie{
		Name: CookieName, Value: value, Path: cookiePath, HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(maxAge / time.Second),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	return c.String()
}

// Begin starts a sign-in: it returns the provider's authorization URL and
// the sealed sign-in cookie value. Without settings, or with a provider that
// cannot be reached, it fails with CodeState.
func (s *Service) Begin(ctx context.Context, redirect string) (location, cookie string, err error) {
	row, err := db.New(s.pool).GetWorkspaceSSO(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", fail(CodeState, "single sign-on is not configured")
	}
	if err != nil {
		return "", "", fmt.Errorf("begin sso: %w", err)
	}
	p, err := s.provider(ctx, row.Issuer)
	if err != nil {
		return "", "", fail(CodeState, "discover provider: %w", err)
	}
	st := flowState{
		State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(),
		Redirect: SafeRedirect(redirect), Expires: s.now().Add(CookieLifetime),
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return "", "", err
	}
	sealed, err := s.cookies.Seal(raw)
	if err != nil {
		return "", "", err
	}
	conf := s.oauth(row, p)
	location = conf.AuthCodeURL(st.State, oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier))
	return location, base64.RawURLEncoding.EncodeToString(sealed), nil
}

func (s *Service) oauth(row db.WorkspaceSso, p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: row.ClientID, Endpoint: p.Endpoint(), RedirectURL: s.RedirectURI(), Scopes: row.Scopes,
	}
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// SafeRedirect returns target when it is a path on this origin, else "/".
// A path starts with exactly one slash; "//host" and "/\host" are
// scheme-relative URLs to browsers, and anything with a scheme or host is
// another origin.
func SafeRedirect(target string) string {
	if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || strings.HasPrefix(target, "/\\") ||
		strings.ContainsAny(target, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	return target
}

// CallbackInput is what the provider's redirect brings back.
type CallbackInput struct {
	Code          string
	State         string
	ProviderError string
	Cookie        string // the sign-in cookie's value
}

// Result is a finished sign-in.
type Result struct {
	Cookie   string // the sealed session cookie value
	Expires  time.Time
	Redirect string
}

// Finish completes a sign-in (docs/security.md, Single sign-on). Every
// failure is a *Failure; none leaves anything behind but the used state and
// its audit entry, auth.login_failed, written in a transaction of its own
// (the sign-in's, when there was one, rolled back). A sign-in records
// auth.login, and whatever it changed, in the sign-in's transaction.
func (s *Service) Finish(ctx context.Context, in CallbackInput) (Result, error) {
	var email string // the address the sign-in tried, once known
	res, err := s.finish(ctx, in, &email)
	var f *Failure
	if errors.As(err, &f) {
		if rerr := s.recordFailure(ctx, f.Code, email); rerr != nil {
			// The sign-in is refused all the same: the caller logs the
			// refusal, and this that its entry is missing.
			s.logger.ErrorContext(ctx, "record sso sign-in failure", "code", f.Code, "err", rerr.Error())
		}
	}
	return res, err
}

// authResource is the resource of a sign-in's entries, as for password
// sign-ins: the user when the address has one, else the address tried
// (empty when the provider named none).
func authResource(userID int64, email string) audit.Resource {
	id := email
	if userID != 0 {
		id = strconv.FormatInt(userID, 10)
	}
	return audit.Resource{Type: audit.Auth, ID: id}
}

// recordFailure records a refused sign-in, by an anonymous actor with the
// address tried when the provider named one.
func (s *Service) recordFailure(ctx context.Context, code, email string) error {
	actor := audit.Actor{Kind: audit.ActorAnonymous, Email: audit.Str(email)}
	return store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		var userID int64
		if email != "" {
			u, err := q.GetUserByEmailForUpdate(ctx, email)
			switch {
			case err == nil:
				userID = u.ID
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
		}
		return s.trail.Record(ctx, q, audit.Change{
			Action: "auth.login_failed", Resource: authResource(userID, email), Actor: &actor,
			After: map[string]string{"method": "sso", "error": code},
		})
	})
}

func (s *Service) finish(ctx context.Context, in CallbackInput, email *string) (Result, error) {
	st, err := s.openCookie(in.Cookie)
	if err != nil {
		return Result{}, err
	}
	if in.State == "" || subtle.ConstantTimeCompare([]byte(in.State), []byte(st.State)) != 1 {
		return Result{}, fail(CodeState, "state does not match the sign-in cookie")
	}
	if err := s.useState(ctx, st); err != nil {
		return Result{}, err
	}
	if in.ProviderError != "" {
		return Result{}, fail(CodeToken, "provider error %q", in.ProviderError)
	}
	row, err := db.New(s.pool).GetWorkspaceSSO(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return Result{}, fail(CodeState, "single sign-on was turned off during the sign-in")
	}
	if err != nil {
		return Result{}, fmt.Errorf("finish sso: %w", err)
	}
	cl, err := s.verify(ctx, row, in.Code, st)
	*email = cl.Email
	if err != nil {
		return Result{}, err
	}
	if err := checkDomain(cl.Email, row.AllowedEmailDomains); err != nil {
		return Result{}, err
	}
	cookie, expires, err := s.sessions.SignIn(ctx, func(q *db.Queries) (int64, error) {
		return s.applySignIn(ctx, q, row, cl)
	})
	if err != nil {
		return Result{}, err
	}
	s.logger.InfoContext(ctx, "sso sign-in", "email", cl.Email, "issuer", row.Issuer)
	return Result{Cookie: cookie, Expires: expires, Redirect: st.Redirect}, nil
}

func (s *Service) openCookie(value string) (flowState, error) {
	if value == "" {
		return flowState{}, fail(CodeState, "no sign-in cookie")
	}
	sealed, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return flowState{}, fail(CodeState, "sign-in cookie: %w", err)
	}
	raw, err := s.cookies.Open(sealed)
	if err != nil {
		return flowState{}, fail(CodeState, "sign-in cookie: %w", err)
	}
	var st flowState
	if err := json.Unmarshal(raw, &st); err != nil {
		return flowState{}, fail(CodeState, "sign-in cookie: %w", err)
	}
	if !s.now().Before(st.Expires) {
		return flowState{}, fail(CodeState, "sign-in cookie expired")
	}
	return st, nil
}

// useState records the state as used, once: a replayed callback, with the
// same cookie and the same state, is refused on every instance.
func (s *Service) useState(ctx context.Context, st flowState) error {
	sum := sha256.Sum256([]byte(st.State))
	now := s.now()
	var n int64
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		if err := q.DeleteExpiredSSOStates(ctx, now); err != nil {
			return err
		}
		var err error
		n, err = q.UseSSOState(ctx, db.UseSSOStateParams{StateHash: sum[:], ExpiresAt: st.Expires})
		return err
	})
	if err != nil {
		return fmt.Errorf("record sso state: %w", err)
	}
	if n == 0 {
		return fail(CodeState, "state already used")
	}
	return nil
}

// claims are what a sign-in uses from the provider.
type claims struct {
	Issuer  string
	Subject string
	Email   string
	Name    string
	Groups  []string
}

// verify exchanges the code with the PKCE verifier, verifies the ID token
// (signature, iss, aud, exp; nonce against the cookie) and collects the
// claims, from the ID token and, for those it lacks, from UserInfo.
func (s *Service) verify(ctx context.Context, row db.WorkspaceSso, code string, st flowState) (claims, error) {
	if code == "" {
		return claims{}, fail(CodeToken, "no code")
	}
	p, err := s.provider(ctx, row.Issuer)
	if err != nil {
		return claims{}, fail(CodeToken, "discover provider: %w", err)
	}
	secret, err := s.secrets.Open(row.ClientSecretSealed)
	if err != nil {
		return claims{}, fail(CodeToken, "open client secret: %w", err)
	}
	conf := s.oauth(row, p)
	conf.ClientSecret = string(secret)
	pctx := s.providerCtx(ctx)
	tok, err := conf.Exchange(pctx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return claims{}, fail(CodeToken, "exchange code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return claims{}, fail(CodeToken, "no id_token in the token response")
	}
	idt, err := p.VerifierContext(pctx, &oidc.Config{ClientID: row.ClientID, Now: s.now}).Verify(pctx, raw)
	if err != nil {
		return claims{}, fail(CodeToken, "verify id token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		return claims{}, fail(CodeToken, "id token nonce does not match the sign-in")
	}
	var all map[string]any
	if err := idt.Claims(&all); err != nil {
		return claims{}, fail(CodeToken, "id token claims: %w", err)
	}
	if _, hasEmail := all["email"]; (!hasEmail || all[row.GroupsClaim] == nil) && p.UserInfoEndpoint() != "" {
		ui, err := p.UserInfo(pctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return claims{}, fail(CodeToken, "userinfo: %w", err)
		}
		if ui.Subject != idt.Subject {
			return claims{}, fail(CodeToken, "userinfo sub does not match the id token's")
		}
		var extra map[string]any
		if err := ui.Claims(&extra); err != nil {
			return claims{}, fail(CodeToken, "userinfo claims: %w", err)
		}
		for k, v := range extra {
			if _, ok := all[k]; !ok {
				all[k] = v
			}
		}
	}
	cl := claims{Issuer: idt.Issuer, Subject: idt.Subject}
	cl.Email, _ = all["email"].(string)
	cl.Email = strings.TrimSpace(cl.Email)
	if cl.Email == "" || !strings.Contains(cl.Email, "@") {
		return claims{}, fail(CodeToken, "no email claim")
	}
	if verifiedFalse(all["email_verified"]) {
		return claims{Email: cl.Email}, fail(CodeToken, "email not verified") // the address tried, for the audit entry
	}
	cl.Name, _ = all["name"].(string)
	if strings.TrimSpace(cl.Name) == "" {
		cl.Name = cl.Email[:strings.LastIndex(cl.Email, "@")]
	}
	cl.Groups = stringList(all[row.GroupsClaim])
	return cl, nil
}

// verifiedFalse reads email_verified, which some providers send as a
// string: only an explicit false counts (absent is not false).
func verifiedFalse(v any) bool {
	switch b := v.(type) {
	case bool:
		return !b
	case string:
		return strings.EqualFold(b, "false")
	}
	return false
}

func stringList(v any) []string {
	switch l := v.(type) {
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return []string{l}
	}
	return nil
}

func checkDomain(email string, allowed []string) error {
	if len(allowed) == 0 {
		return nil
	}
	domain := strings.ToLower(email[strings.LastIndex(email, "@")+1:])
	for _, d := range allowed {
		if domain == d {
			return nil
		}
	}
	return fail(CodeDomain, "email domain %q is not allowed", domain)
}
