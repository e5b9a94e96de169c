package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testop"
)

// ssoWorld is an instance whose single sign-on points at a real provider.
type ssoWorld struct {
	s     *apptest.Server
	op    *testOP
	admin string // a workspace admin's token
}

func newSSOWorld(t *testing.T, settings map[string]any) *ssoWorld {
	t.Helper()
	return newSSOWorldAt(t, startOP(t), settings)
}

// newSSOWorldAt is newSSOWorld with a provider of the test's own.
func newSSOWorldAt(t *testing.T, op *testOP, settings map[string]any) *ssoWorld {
	t.Helper()
	w := &ssoWorld{op: op}
	w.s = apptest.Start(t, map[string]string{"PUBLIC_URL": testPublicURL})
	_, w.admin = w.s.User(t, "root@example.com", "admin")
	w.configure(t, settings)
	return w
}

func (w *ssoWorld) configure(t *testing.T, settings map[string]any) {
	t.Helper()
	body := map[string]any{"issuer": w.op.URL, "client_id": opClientID, "client_secret": opClientSecret}
	for k, v := range settings {
		body[k] = v
	}
	status, raw, _ := w.s.Do(t, apptest.Request{Method: "PUT", Path: "/api/workspace/sso", Bearer: w.admin, Body: body})
	if status != http.StatusOK {
		t.Fatalf("PUT /api/workspace/sso = %d %s", status, raw)
	}
}

// flow is one sign-in in progress: the provider URL and the sign-in cookie.
type flow struct {
	authURL *url.URL
	cookie  *http.Cookie
}

func (w *ssoWorld) begin(t *testing.T, redirect string) flow {
	t.Helper()
	resp := getNoFollow(t, w.s.URL+"/api/auth/oidc/login?redirect="+url.QueryEscape(redirect))
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("login = %d", resp.StatusCode)
	}
	loc := location(t, resp)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "lg_sso" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.MaxAge != 600 {
		t.Fatalf("login set no HttpOnly 10-minute lg_sso cookie: %v", resp.Header.Values("Set-Cookie"))
	}
	return flow{authURL: loc, cookie: cookie}
}

// callback sends the provider's redirect to the instance and returns where
// the instance sends the browser, and the session cookie if one was set.
func (w *ssoWorld) callback(t *testing.T, back *url.URL, cookie *http.Cookie) (*url.URL, *http.Cookie) {
	t.Helper()
	if got := back.Scheme + "://" + back.Host + back.Path; got != testPublicURL+"/api/auth/oidc/callback" {
		t.Fatalf("provider redirected to %s", got)
	}
	var cookies []*http.Cookie
	if cookie != nil {
		cookies = append(cookies, cookie)
	}
	resp := getNoFollow(t, w.s.URL+back.Path+"?"+back.RawQuery, cookies...)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("callback = %d", resp.StatusCode)
	}
	loc := location(t, resp)
	for _, c := range resp.Cookies() {
		if c.Name == "lg_session" && c.Value != "" {
			return loc, c
		}
	}
	return loc, nil
}

// signIn runs a whole sign-in as subject.
func (w *ssoWorld) signIn(t *testing.T, subject, redirect string) (*url.URL, *http.Cookie) {
	t.Helper()
	f := w.begin(t, redirect)
	return w.callback(t, w.op.authorize(t, f.authURL.String(), subject), f.cookie)
}

func wantError(t *testing.T, loc *url.URL, session *http.Cookie, code string) {
	t.Helper()
	if loc.Path != "/login" || loc.Query().Get("error") != code || session != nil {
		t.Fatalf("landed on %s (session %v), want /login?error=%s and no session", loc, session != nil, code)
	}
}

// wantReason checks the logged reason of the latest refused sign-in, so a
// test of one defence is not passed by another.
func (w *ssoWorld) wantReason(t *testing.T, reason string) {
	t.Helper()
	lines := w.s.LogLines("sso sign-in refused")
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], reason) {
		t.Errorf("latest refusal %v, want a reason containing %q", lines[max(0, len(lines)-1):], reason)
	}
}

func (w *ssoWorld) me(t *testing.T, session *http.Cookie) map[string]any {
	t.Helper()
	status, raw, _ := w.s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Cookie: session})
	if status != http.StatusOK {
		t.Fatalf("GET /api/auth/me with the SSO session = %d %s", status, raw)
	}
	var me map[string]any
	_ = json.Unmarshal(raw, &me)
	return me
}

func (w *ssoWorld) userCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := w.s.DB(t).QueryRow(context.Background(), `SELECT count(*) FROM users`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

type linkRow struct {
	id      int64
	role    string
	linked  bool
	subject *string
}

func (w *ssoWorld) user(t *testing.T, email string) linkRow {
	t.Helper()
	var r linkRow
	err := w.s.DB(t).QueryRow(context.Background(),
		`SELECT id, role, sso_linked, oidc_subject FROM users WHERE lower(email) = lower($1)`, email).Scan(&r.id, &r.role, &r.linked, &r.subject)
	if err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return r
}

func TestSSOProvisionsANewUserWithAWorkingSession(t *testing.T) {
	t.Parallel()
	for _, inIDToken := range []bool{true, false} {
		name := "claims in the ID token"
		if !inIDToken {
			name = "claims from UserInfo"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newSSOWorld(t, nil)
			w.op.set(func(o *testop.Switches) { o.ClaimsOnlyInUserinfo = !inIDToken })
			w.op.addUser(opUser{Subject: "sub-ada", Email: "ada@example.com", EmailVerified: true, Name: "Ada Lovelace"})
			loc, session := w.signIn(t, "sub-ada", "/projects?tab=flags")
			if session == nil || loc.String() != "/projects?tab=flags" {
				t.Fatalf("landed on %s with session %v, want /projects?tab=flags with a session", loc, session != nil)
			}
			if me := w.me(t, session); me["email"] != "ada@example.com" || me["name"] != "Ada Lovelace" || me["role"] != "viewer" {
				t.Errorf("me = %v, want the new viewer Ada", me)
			}
			if u := w.user(t, "ada@example.com"); !u.linked || u.subject == nil || *u.subject != "sub-ada" {
				t.Errorf("user = %+v, want linked to sub-ada", u)
			}
		})
	}
}

func TestSSOLinksByEmailThenBySubject(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	id, _ := w.s.User(t, "grace@example.com", "editor")
	w.op.addUser(opUser{Subject: "sub-grace", Email: "Grace@Example.com", EmailVerified: true, Name: "Grace"})
	if _, session := w.signIn(t, "sub-grace", "/"); session == nil {
		t.Fatal("first sign-in failed")
	}
	u := w.user(t, "grace@example.com")
	if u.id != id || !u.linked || *u.subject != "sub-grace" {
		t.Fatalf("after linking by email: %+v, want user %d linked to sub-grace", u, id)
	}
	// The provider's email changes; the subject still finds the same user.
	w.op.addUser(opUser{Subject: "sub-grace", Email: "grace.hopper@example.com", EmailVerified: true, Name: "Grace"})
	before := w.userCount(t)
	_, session := w.signIn(t, "sub-grace", "/")
	if session == nil {
		t.Fatal("second sign-in failed")
	}
	if me := w.me(t, session); int64(me["id"].(float64)) != id {
		t.Errorf("second sign-in is user %v, want %d", me["id"], id)
	}
	if w.userCount(t) != before {
		t.Error("second sign-in created a user")
	}
}

func TestSSOGroupMappingsAndAdminGroups(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	project, _ := w.s.DefaultProject(t)
	w.configure(t, map[string]any{
		"group_mappings": []map[string]any{
			{"group": "eng", "project_id": project, "role": "editor"},
			{"group": "leads", "project_id": project, "role": "admin"},
			{"group": "support", "project_id": project, "role": "viewer"},
		},
		"admin_groups": []string{"sw-admins"},
	})
	member := func(email string) (string, string) {
		var role, source string
		err := w.s.DB(t).QueryRow(context.Background(),
			`SELECT m.role, m.source FROM project_members m JOIN users u ON u.id = m.user_id WHERE lower(u.email) = $1 AND m.project_id = $2`,
			email, project).Scan(&role, &source)
		if err != nil {
			return "", ""
		}
		return role, source
	}

	w.op.addUser(opUser{Subject: "sub-lin", Email: "lin@example.com", EmailVerified: true, Groups: []string{"support", "leads", "eng", "sw-admins"}})
	_, session := w.signIn(t, "sub-lin", "/")
	if me := w.me(t, session); me["role"] != "admin" {
		t.Errorf("admin-group member's workspace role = %v, want admin", me["role"])
	}
	if role, source := member("lin@example.com"); role != "admin" || source != "sso" {
		t.Errorf("membership = %s (%s), want the highest mapped role, admin, made by sso", role, source)
	}

	w.op.addUser(opUser{Subject: "sub-lin", Email: "lin@example.com", EmailVerified: true, Groups: []string{"eng"}})
	_, session = w.signIn(t, "sub-lin", "/")
	if me := w.me(t, session); me["role"] != "viewer" {
		t.Errorf("after leaving the admin group: role %v, want viewer", me["role"])
	}
	if role, _ := member("lin@example.com"); role != "editor" {
		t.Errorf("after leaving leads: membership %q, want editor", role)
	}

	w.op.addUser(opUser{Subject: "sub-lin", Email: "lin@example.com", EmailVerified: true})
	w.signIn(t, "sub-lin", "/")
	if role, _ := member("lin@example.com"); role != "" {
		t.Errorf("after leaving every mapped group: membership %q, want none", role)
	}

	// A membership made by hand is left alone.
	handID, _ := w.s.User(t, "hand@example.com", "viewer")
	w.s.Member(t, project, handID, "viewer")
	w.op.addUser(opUser{Subject: "sub-hand", Email: "hand@example.com", EmailVerified: true, Groups: []string{"leads"}})
	w.signIn(t, "sub-hand", "/")
	if role, source := member("hand@example.com"); role != "viewer" || source != "manual" {
		t.Errorf("hand-made membership became %s (%s), want viewer (manual)", role, source)
	}
	w.op.addUser(opUser{Subject: "sub-hand", Email: "hand@example.com", EmailVerified: true})
	w.signIn(t, "sub-hand", "/")
	if role, _ := member("hand@example.com"); role != "viewer" {
		t.Errorf("hand-made membership removed by a sign-in")
	}

	// The last active admin keeps admin even outside the admin groups.
	if _, err := w.s.DB(t).Exec(context.Background(), `UPDATE users SET active = false WHERE email = 'root@example.com'`); err != nil {
		t.Fatal(err)
	}
	w.op.addUser(opUser{Subject: "sub-lin", Email: "lin@example.com", EmailVerified: true, Groups: []string{"sw-admins"}})
	w.signIn(t, "sub-lin", "/")
	w.op.addUser(opUser{Subject: "sub-lin", Email: "lin@example.com", EmailVerified: true})
	_, session = w.signIn(t, "sub-lin", "/")
	if me := w.me(t, session); me["role"] != "admin" {
		t.Errorf("the last active admin lost admin: role %v", me["role"])
	}
}

func TestSSOFailures(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, map[string]any{"allowed_email_domains": []string{"example.com"}})
	w.op.addUser(opUser{Subject: "sub-ok", Email: "ok@example.com", EmailVerified: true})
	w.op.addUser(opUser{Subject: "sub-unverified", Email: "victim@example.com", EmailVerified: false})
	w.op.addUser(opUser{Subject: "sub-elsewhere", Email: "eve@elsewhere.org", EmailVerified: true})
	deactivatedID, _ := w.s.User(t, "gone@example.com", "viewer")
	if _, err := w.s.DB(t).Exec(context.Background(), `UPDATE users SET active = false WHERE id = $1`, deactivatedID); err != nil {
		t.Fatal(err)
	}
	w.op.addUser(opUser{Subject: "sub-gone", Email: "gone@example.com", EmailVerified: true})

	t.Run("state that does not match the cookie", func(t *testing.T) {
		f := w.begin(t, "/")
		back := w.op.authorize(t, f.authURL.String(), "sub-ok")
		q := back.Query()
		q.Set("state", "forged")
		back.RawQuery = q.Encode()
		loc, session := w.callback(t, back, f.cookie)
		wantError(t, loc, session, "sso_state")
		w.wantReason(t, "does not match the sign-in cookie")
	})
	t.Run("no sign-in cookie", func(t *testing.T) {
		f := w.begin(t, "/")
		loc, session := w.callback(t, w.op.authorize(t, f.authURL.String(), "sub-ok"), nil)
		wantError(t, loc, session, "sso_state")
	})
	t.Run("replayed callback", func(t *testing.T) {
		f := w.begin(t, "/")
		back := w.op.authorize(t, f.authURL.String(), "sub-ok")
		if _, session := w.callback(t, back, f.cookie); session == nil {
			t.Fatal("first use failed")
		}
		loc, session := w.callback(t, back, f.cookie)
		wantError(t, loc, session, "sso_state")
		w.wantReason(t, "already used")
	})
	t.Run("nonce of another sign-in", func(t *testing.T) {
		// The victim's cookie and state, with a code the provider issued for
		// another sign-in (its nonce) that reuses the victim's PKCE challenge.
		victim, other := w.begin(t, "/"), w.begin(t, "/")
		q := other.authURL.Query()
		q.Set("state", victim.authURL.Query().Get("state"))
		q.Set("code_challenge", victim.authURL.Query().Get("code_challenge"))
		u := *other.authURL
		u.RawQuery = q.Encode()
		loc, session := w.callback(t, w.op.authorize(t, u.String(), "sub-ok"), victim.cookie)
		wantError(t, loc, session, "sso_token")
		w.wantReason(t, "nonce")
	})
	t.Run("code issued to another client", func(t *testing.T) {
		f := w.begin(t, "/")
		q := f.authURL.Query()
		q.Set("client_id", opOtherClient)
		u := *f.authURL
		u.RawQuery = q.Encode()
		loc, session := w.callback(t, w.op.authorize(t, u.String(), "sub-ok"), f.cookie)
		wantError(t, loc, session, "sso_token")
		w.wantReason(t, "exchange code")
	})
	t.Run("UserInfo for another subject", func(t *testing.T) {
		w.op.set(func(o *testop.Switches) { o.ClaimsOnlyInUserinfo, o.UserinfoSubject = true, "sub-someone-else" })
		defer w.op.set(func(o *testop.Switches) { *o = testop.Switches{} })
		loc, session := w.signIn(t, "sub-ok", "/")
		wantError(t, loc, session, "sso_token")
		w.wantReason(t, "userinfo sub")
	})

	before := w.userCount(t)
	for _, tc := range []struct{ name, subject, code string }{
		{"unverified email", "sub-unverified", "sso_token"},
		{"domain not allowed", "sub-elsewhere", "sso_domain"},
		{"deactivated user", "sub-gone", "sso_deactivated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, session := w.signIn(t, tc.subject, "/")
			wantError(t, loc, session, tc.code)
		})
	}
	t.Run("not provisioned", func(t *testing.T) {
		w.configure(t, map[string]any{"auto_provision": false})
		w.op.addUser(opUser{Subject: "sub-new", Email: "new@example.com", EmailVerified: true})
		loc, session := w.signIn(t, "sub-new", "/")
		wantError(t, loc, session, "sso_not_provisioned")
	})
	if n := w.userCount(t); n != before {
		t.Errorf("failed sign-ins changed the users: %d, want %d", n, before)
	}
	if u := w.user(t, "gone@example.com"); u.linked {
		t.Error("a refused sign-in linked the deactivated user")
	}
}

func TestSSORedirectsStayOnThisOrigin(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	w.op.addUser(opUser{Subject: "sub-r", Email: "r@example.com", EmailVerified: true})
	for _, target := range []string{"//evil.example", "https://evil.example", "/\\evil.example", "evil.example", "javascript:alert(1)", ""} {
		loc, session := w.signIn(t, "sub-r", target)
		if session == nil || loc.String() != "/" {
			t.Errorf("redirect %q landed on %s (session %v), want /", target, loc, session != nil)
		}
	}
}

func TestSSOSurvivesKeyRotation(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	w.op.addUser(opUser{Subject: "sub-k", Email: "k@example.com", EmailVerified: true})
	if _, session := w.signIn(t, "sub-k", "/"); session == nil {
		t.Fatal("sign-in before rotation failed")
	}
	w.op.rotate(t)
	if _, session := w.signIn(t, "sub-k", "/"); session == nil {
		t.Fatal("sign-in after the provider rotated its key failed")
	}
}

func TestSSOAdminsOnlyPasswordLogin(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, map[string]any{"password_login": "admins_only"})
	_, viewerToken := w.s.User(t, "viewer@example.com", "viewer")
	login := func(email string) (int, map[string]any) {
		status, raw, _ := w.s.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/login", Body: map[string]any{"email": email, "password": "password123"}})
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		return status, body
	}
	if status, body := login("viewer@example.com"); status != http.StatusForbidden || body["code"] != "SSO_REQUIRED" {
		t.Errorf("viewer password login = %d %v, want 403 SSO_REQUIRED", status, body)
	}
	if status, body := login("root@example.com"); status != http.StatusOK {
		t.Errorf("admin password login = %d %v, want 200", status, body)
	}
	if status, raw, _ := w.s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Bearer: viewerToken}); status != http.StatusOK {
		t.Errorf("viewer's personal access token = %d %s, want 200", status, raw)
	}
	status, raw, _ := w.s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/sso"})
	if status != http.StatusOK || !strings.Contains(string(raw), `"password_login":"admins_only"`) || !strings.Contains(string(raw), `"enabled":true`) {
		t.Errorf("GET /api/auth/sso = %d %s", status, raw)
	}
}

func TestSSOSettingsAPI(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	status, raw, _ := w.s.Do(t, apptest.Request{Method: "GET", Path: "/api/workspace/sso", Bearer: w.admin})
	if status != http.StatusOK || strings.Contains(string(raw), opClientSecret) || !strings.Contains(string(raw), `"client_secret_set":true`) {
		t.Fatalf("GET /api/workspace/sso = %d %s, want the settings without the secret", status, raw)
	}
	var got map[string]any
	_ = json.Unmarshal(raw, &got)
	if got["groups_claim"] != "groups" || got["auto_provision"] != true || got["password_login"] != "enabled" ||
		len(got["scopes"].([]any)) != 3 || got["redirect_uri"] != testPublicURL+"/api/auth/oidc/callback" {
		t.Errorf("defaults = %v", got)
	}
	var sealed []byte
	if err := w.s.DB(t).QueryRow(context.Background(), `SELECT client_secret_sealed FROM workspace_sso`).Scan(&sealed); err != nil || strings.Contains(string(sealed), opClientSecret) {
		t.Errorf("the client secret is stored in clear (err %v)", err)
	}
	if strings.Contains(w.s.Logs(), opClientSecret) {
		t.Error("the client secret is in the logs")
	}

	for _, issuer := range []string{"http://127.0.0.1:1", w.op.URL + "/other"} {
		status, raw, _ = w.s.Do(t, apptest.Request{Method: "PUT", Path: "/api/workspace/sso", Bearer: w.admin,
			Body: map[string]any{"issuer": issuer, "client_id": "x", "client_secret": "y"}})
		if status != http.StatusUnprocessableEntity {
			t.Errorf("PUT with issuer %s = %d %s, want 422", issuer, status, raw)
		}
	}
	status, raw, _ = w.s.Do(t, apptest.Request{Method: "PUT", Path: "/api/workspace/sso", Bearer: w.admin,
		Body: map[string]any{"issuer": w.op.URL, "client_id": "x", "client_secret": "y",
			"group_mappings": []map[string]any{{"group": "g", "project_id": uuid.New(), "role": "viewer"}}}})
	if status != http.StatusUnprocessableEntity {
		t.Errorf("PUT with a mapping to no project = %d %s, want 422", status, raw)
	}

	_, viewer := w.s.User(t, "v@example.com", "viewer")
	for _, m := range []string{"GET", "DELETE"} {
		if status, raw, _ := w.s.Do(t, apptest.Request{Method: m, Path: "/api/workspace/sso", Bearer: viewer}); status != http.StatusForbidden {
			t.Errorf("%s by a viewer = %d %s, want 403", m, status, raw)
		}
	}
	if status, raw, _ := w.s.Do(t, apptest.Request{Method: "DELETE", Path: "/api/workspace/sso", Bearer: w.admin}); status != http.StatusNoContent {
		t.Fatalf("DELETE = %d %s", status, raw)
	}
	status, raw, _ = w.s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/sso"})
	if status != http.StatusOK || !strings.Contains(string(raw), `"enabled":false`) {
		t.Errorf("GET /api/auth/sso after DELETE = %d %s", status, raw)
	}
	if loc := noFollow(t, w.s.URL+"/api/auth/oidc/login"); loc.String() != "/login?error=sso_state" {
		t.Errorf("login with SSO off went to %s", loc)
	}
}

// TestSSOTestConnection: the dashboard's "test connection" reports what the
// provider publishes and stores nothing; it and PUT refuse a discovery
// document served from one address that names another issuer.
func TestSSOTestConnection(t *testing.T) {
	t.Parallel()
	op := startOP(t)
	s := apptest.Start(t, map[string]string{"PUBLIC_URL": testPublicURL})
	_, admin := s.User(t, "root@example.com", "admin")
	_, viewer := s.User(t, "v@example.com", "viewer")

	status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/workspace/sso/test", Bearer: admin, Body: map[string]any{"issuer": " " + op.URL + " "}})
	var got map[string]any
	_ = json.Unmarshal(raw, &got)
	if status != http.StatusOK || got["issuer"] != op.URL || got["authorization_endpoint"] != op.URL+"/auth" ||
		got["token_endpoint"] != op.URL+"/oauth/token" || got["userinfo_endpoint"] != op.URL+"/userinfo" || got["signing_keys"] != float64(1) {
		t.Errorf("test = %d %s", status, raw)
	}
	if status, raw, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/workspace/sso", Bearer: admin}); status != http.StatusNotFound {
		t.Errorf("a test stored settings: GET = %d %s", status, raw)
	}

	// The same document served from another address names the provider,
	// not the address asked.
	target, _ := url.Parse(op.URL)
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(proxy.Close)
	for _, issuer := range []string{proxy.URL, "http://127.0.0.1:1"} {
		status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/workspace/sso/test", Bearer: admin, Body: map[string]any{"issuer": issuer}})
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(raw), "discovery failed") {
			t.Errorf("test of %s = %d %s, want 422 with the reason", issuer, status, raw)
		}
		status, raw, _ = s.Do(t, apptest.Request{Method: "PUT", Path: "/api/workspace/sso", Bearer: admin,
			Body: map[string]any{"issuer": issuer, "client_id": opClientID, "client_secret": opClientSecret}})
		if status != http.StatusUnprocessableEntity {
			t.Errorf("PUT with issuer %s = %d %s, want 422", issuer, status, raw)
		}
	}
	if status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/workspace/sso/test", Bearer: admin, Body: map[string]any{"issuer": "ftp://x"}}); status != http.StatusUnprocessableEntity {
		t.Errorf("test of a non-http issuer = %d %s, want 422", status, raw)
	}
	if status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/workspace/sso/test", Bearer: viewer, Body: map[string]any{"issuer": op.URL}}); status != http.StatusForbidden {
		t.Errorf("test by a viewer = %d %s, want 403", status, raw)
	}
}

// TestSSOIssuerAsTheProviderNamesIt: the issuer is kept exactly as given
// (spaces trimmed), a trailing slash included, and a sign-in works against
// a provider that names itself with one as well as without; an issuer that
// differs from the provider's only by that slash is refused with the one
// to use, whichever way round.
func TestSSOIssuerAsTheProviderNamesIt(t *testing.T) {
	t.Parallel()
	for _, slash := range []bool{false, true} {
		name := "issuer without a trailing slash"
		if slash {
			name = "issuer with a trailing slash"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			op := startOPWith(t, testop.Config{TrailingSlash: slash})
			if strings.HasSuffix(op.URL, "/") != slash {
				t.Fatalf("provider issuer %q", op.URL)
			}
			w := newSSOWorldAt(t, op, map[string]any{"issuer": "  " + op.URL + "\t"})
			var got map[string]any
			must(t, w.s, w.admin, "GET", "/api/workspace/sso", nil, http.StatusOK, &got)
			if got["issuer"] != op.URL {
				t.Errorf("stored issuer %q, want %q exactly", got["issuer"], op.URL)
			}
			var doc map[string]any
			must(t, w.s, w.admin, "POST", "/api/workspace/sso/test", map[string]any{"issuer": op.URL}, http.StatusOK, &doc)
			if doc["issuer"] != op.URL || doc["authorization_endpoint"] != op.Base+"/auth" {
				t.Errorf("test connection = %v", doc)
			}

			w.op.addUser(opUser{Subject: "sub-iss", Email: "iss@example.com", EmailVerified: true, Name: "Iss"})
			loc, session := w.signIn(t, "sub-iss", "/flags")
			if session == nil || loc.String() != "/flags" {
				t.Fatalf("sign-in landed on %s (session %v)", loc, session != nil)
			}
			if me := w.me(t, session); me["email"] != "iss@example.com" {
				t.Errorf("me = %v", me)
			}
			var issuer string
			if err := w.s.DB(t).QueryRow(context.Background(), `SELECT oidc_issuer FROM users WHERE email = 'iss@example.com'`).Scan(&issuer); err != nil || issuer != op.URL {
				t.Errorf("linked to issuer %q (err %v), want %q", issuer, err, op.URL)
			}
			// The second sign-in finds the user by the issuer and subject.
			before := w.userCount(t)
			if _, session := w.signIn(t, "sub-iss", "/"); session == nil || w.userCount(t) != before {
				t.Errorf("second sign-in: session %v, users %d, want %d", session != nil, w.userCount(t), before)
			}

			other := strings.TrimSuffix(op.URL, "/")
			if !slash {
				other = op.URL + "/"
			}
			want := fmt.Sprintf("issuer: the provider names itself %q — use that", op.URL)
			for _, path := range []string{"/api/workspace/sso", "/api/workspace/sso/test"} {
				method := "PUT"
				if strings.HasSuffix(path, "/test") {
					method = "POST"
				}
				status, raw, _ := w.s.Do(t, apptest.Request{Method: method, Path: path, Bearer: w.admin,
					Body: map[string]any{"issuer": other, "client_id": opClientID, "client_secret": opClientSecret}})
				var body struct {
					Error   string `json:"error"`
					Details []struct {
						Field, Message string
					} `json:"details"`
				}
				_ = json.Unmarshal(raw, &body)
				if status != http.StatusUnprocessableEntity || body.Error != want || len(body.Details) != 1 || body.Details[0].Field != "issuer" {
					t.Errorf("%s %s with issuer %q = %d %s, want 422 %q", method, path, other, status, raw, want)
				}
			}
			// The refused PUT left the settings as they were.
			must(t, w.s, w.admin, "GET", "/api/workspace/sso", nil, http.StatusOK, &got)
			if got["issuer"] != op.URL {
				t.Errorf("after a refused PUT the issuer is %q", got["issuer"])
			}
		})
	}
}
