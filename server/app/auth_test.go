package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

var epoch = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

type loginReply struct {
	status            int
	body              map[string]any
	cookie            *http.Cookie
	rawCookie         string
	attemptsRemaining float64
	retryAfter        float64
	retryAfterHeader  string
}

func login(t *testing.T, s *apptest.Server, email, password string) loginReply {
	t.Helper()
	status, raw, resp := s.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/login", Body: map[string]string{"email": email, "password": password}})
	r := loginReply{status: status, rawCookie: resp.Header.Get("Set-Cookie"), retryAfterHeader: resp.Header.Get("Retry-After")}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("login body %s: %v", raw, err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "lg_session" {
			r.cookie = c
		}
	}
	r.attemptsRemaining, _ = r.body["attempts_remaining"].(float64)
	r.retryAfter, _ = r.body["retry_after_seconds"].(float64)
	return r
}

func TestLoginSessionAndLogout(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	id, _ := s.User(t, "ada@example.com", "editor")

	r := login(t, s, "ADA@example.com ", "password123") // addresses are case-insensitive
	if r.status != http.StatusOK || r.cookie == nil {
		t.Fatalf("login = %d %v, cookie %v", r.status, r.body, r.cookie)
	}
	want := map[string]any{"id": float64(id), "email": "ada@example.com", "name": "ada@example.com", "role": "editor", "workspace_name": "Switchyard", "is_setup_complete": true}
	for k, v := range want {
		if r.body[k] != v {
			t.Errorf("login %s = %v, want %v", k, r.body[k], v)
		}
	}
	for _, attr := range []string{"Path=/", "Max-Age=604800", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(r.rawCookie, attr) {
			t.Errorf("Set-Cookie %q lacks %s", r.rawCookie, attr)
		}
	}
	if strings.Contains(r.rawCookie, "Secure") {
		t.Errorf("COOKIE_SECURE=false but the cookie is Secure: %q", r.rawCookie)
	}

	status, raw, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Cookie: r.cookie})
	if status != http.StatusOK || !strings.Contains(string(raw), `"email":"ada@example.com"`) {
		t.Fatalf("me = %d %s", status, raw)
	}
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me"}); status != http.StatusUnauthorized {
		t.Errorf("me without credentials = %d, want 401", status)
	}

	// CSRF (docs/reference/identity.md, CSRF header): a cookie mutation needs
	// the header.
	if status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/logout", Cookie: r.cookie}); status != http.StatusForbidden {
		t.Fatalf("logout without X-Service-Request = %d %s, want 403", status, raw)
	}
	status, _, resp := s.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/logout", Cookie: r.cookie, Header: map[string]string{"X-Service-Request": "true"}})
	if status != http.StatusNoContent || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout = %d, Set-Cookie %q; want 204 clearing the cookie", status, resp.Header.Get("Set-Cookie"))
	}
	// Logout deletes the session, so a copied cookie stops working.
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Cookie: r.cookie}); status != http.StatusUnauthorized {
		t.Errorf("me with a logged-out cookie = %d, want 401", status)
	}
}

func TestSecureCookieWhenConfigured(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, map[string]string{"COOKIE_SECURE": "true", "SESSION_SECRET": strings.Repeat("s3cr3t-", 6)})
	s.User(t, "ada@example.com", "viewer")
	if r := login(t, s, "ada@example.com", "password123"); !strings.Contains(r.rawCookie, "; Secure") {
		t.Errorf("Set-Cookie %q lacks Secure", r.rawCookie)
	}
}

func TestLockout(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(epoch)
	s := apptest.Start(t, nil, app.WithClock(clock.Now))
	s.User(t, "ada@example.com", "viewer")

	for i, want := range []float64{4, 3, 2, 1} {
		r := login(t, s, "ada@example.com", "wrong password")
		if r.status != http.StatusUnauthorized || r.attemptsRemaining != want || r.body["error"] == "" {
			t.Fatalf("failure %d = %d %v, want 401 with attempts_remaining %v", i+1, r.status, r.body, want)
		}
		clock.Advance(time.Minute)
	}
	// The 5th failure within 10 minutes answers 401 with 0 and locks.
	if r := login(t, s, "ada@example.com", "wrong password"); r.status != http.StatusUnauthorized || r.attemptsRemaining != 0 {
		t.Fatalf("5th failure = %d %v, want 401 attempts_remaining 0", r.status, r.body)
	}
	// During the lock even the right password answers 429.
	r := login(t, s, "ada@example.com", "password123")
	if r.status != http.StatusTooManyRequests || r.retryAfter != 900 || r.retryAfterHeader != "900" {
		t.Fatalf("right password while locked = %d %v (Retry-After %q), want 429 retry_after_seconds 900", r.status, r.body, r.retryAfterHeader)
	}
	clock.Advance(5 * time.Minute)
	if r := login(t, s, "ada@example.com", "password123"); r.status != http.StatusTooManyRequests || r.retryAfter != 600 {
		t.Fatalf("5 minutes into the lock = %d %v, want 429 retry_after_seconds 600", r.status, r.body)
	}
	clock.Advance(10 * time.Minute)
	if r := login(t, s, "ada@example.com", "password123"); r.status != http.StatusOK {
		t.Fatalf("after the lock = %d %v, want 200", r.status, r.body)
	}
	// A success resets the count.
	if r := login(t, s, "ada@example.com", "wrong password"); r.attemptsRemaining != 4 {
		t.Errorf("first failure after a success: attempts_remaining %v, want 4", r.attemptsRemaining)
	}
}

func TestLockoutWindowAndUnknownAddresses(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(epoch)
	s := apptest.Start(t, nil, app.WithClock(clock.Now))
	// Unknown addresses count the same way, so responses reveal nothing.
	for i := 0; i < 4; i++ {
		login(t, s, "nobody@example.com", "x")
	}
	clock.Advance(11 * time.Minute) // failures older than 10 minutes no longer count
	if r := login(t, s, "nobody@example.com", "x"); r.status != http.StatusUnauthorized || r.attemptsRemaining != 4 {
		t.Fatalf("after the window = %d %v, want 401 attempts_remaining 4", r.status, r.body)
	}
	for i := 0; i < 4; i++ {
		login(t, s, "nobody@example.com", "x")
	}
	if r := login(t, s, "nobody@example.com", "x"); r.status != http.StatusTooManyRequests || r.retryAfter != 900 {
		t.Fatalf("unknown address after 5 failures = %d %v, want 429 retry_after_seconds 900", r.status, r.body)
	}
}

func TestSessionExpiresAfterSevenDays(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(epoch)
	s := apptest.Start(t, nil, app.WithClock(clock.Now))
	s.User(t, "ada@example.com", "viewer")
	r := login(t, s, "ada@example.com", "password123")
	clock.Advance(7*24*time.Hour - time.Minute)
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Cookie: r.cookie}); status != http.StatusOK {
		t.Fatalf("me just before expiry = %d, want 200", status)
	}
	clock.Advance(time.Minute)
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Cookie: r.cookie}); status != http.StatusUnauthorized {
		t.Fatalf("me at expiry = %d, want 401", status)
	}
}

func TestCredentialKinds(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(epoch)
	legacy := "sk_live_legacy_key_from_the_environment"
	s := apptest.Start(t, map[string]string{"SDK_KEY": legacy}, app.WithClock(clock.Now))
	id, token := s.User(t, "ada@example.com", "viewer")
	past := epoch.Add(-time.Hour)
	expired := s.Token(t, id, "read_write", &past)
	_, envs := s.DefaultProject(t)
	sdkKey := s.SDKKey(t, envs["production"])

	cases := []struct {
		name   string
		header string
		want   int
	}{
		{"personal access token", "Bearer " + token, http.StatusOK},
		{"lowercase scheme", "bearer " + token, http.StatusOK},
		{"expired token", "Bearer " + expired, http.StatusUnauthorized},
		{"unknown token", "Bearer pat_0000000000000000", http.StatusUnauthorized},
		{"SDK key is not a user", "Bearer " + sdkKey, http.StatusForbidden},
		{"legacy SDK_KEY is recognised", "Bearer " + legacy, http.StatusForbidden},
		{"unknown SDK key", "Bearer sk_live_nope", http.StatusUnauthorized},
		{"unknown credential kind", "Bearer abc", http.StatusUnauthorized},
		{"basic auth", "Basic YWRhOnBhc3N3b3Jk", http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, raw, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Header: map[string]string{"Authorization": c.header}})
			if status != c.want {
				t.Errorf("me with %s = %d %s, want %d", c.name, status, raw, c.want)
			}
		})
	}
	// Bearer clients are exempt from the CSRF header rule.
	if status, _, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/logout", Bearer: token}); status != http.StatusNoContent {
		t.Errorf("logout with a token = %d, want 204", status)
	}
	var lastUsed *time.Time
	if err := s.DB(t).QueryRow(context.Background(), `SELECT last_used_at FROM personal_access_tokens WHERE user_id = $1 AND expires_at IS NULL`, id).Scan(&lastUsed); err != nil {
		t.Fatal(err)
	}
	if lastUsed == nil || !lastUsed.Equal(epoch) {
		t.Errorf("last_used_at = %v, want %v", lastUsed, epoch)
	}
}

// Revocations and deletions reach every instance. Sessions, tokens and users
// are read from the database on every request; SDK keys are cached and
// forgotten through the bus (milliseconds) and the change log (a deletion
// the bus never heard of, within the poll interval).
func TestRevocationSeenByAnotherInstance(t *testing.T) {
	t.Parallel()
	url, _, _ := redisOn(t)
	opts := []app.Option{app.WithBusChannel("revoke-" + uuid.NewString()), app.WithStreamTiming(time.Second, 100*time.Millisecond)}
	a := apptest.Start(t, map[string]string{"REDIS_URL": url}, opts...)
	b := apptest.Start(t, map[string]string{"REDIS_URL": url, "DATABASE_URL": a.DBURL}, opts...)
	project, envs := a.DefaultProject(t)
	key := a.SDKKey(t, envs["production"])
	other := a.SDKKey(t, envs["staging"])
	id, token := a.User(t, "ada@example.com", "admin")
	r := login(t, a, "ada@example.com", "password123")

	me := func(s *apptest.Server, req apptest.Request) int {
		req.Method, req.Path = "GET", "/api/auth/me"
		status, _, _ := s.Do(t, req)
		return status
	}
	if me(b, apptest.Request{Bearer: key}) != http.StatusForbidden || me(b, apptest.Request{Bearer: other}) != http.StatusForbidden ||
		me(b, apptest.Request{Cookie: r.cookie}) != http.StatusOK {
		t.Fatal("instance B does not accept the credentials made on A")
	}
	keyID := func(full string) int64 {
		var kid int64
		if err := a.DB(t).QueryRow(t.Context(), `SELECT id FROM sdk_keys WHERE prefix = $1`, full[:12]).Scan(&kid); err != nil {
			t.Fatal(err)
		}
		return kid
	}
	revokedWithin := func(s *apptest.Server, full string, limit time.Duration) time.Duration {
		start := time.Now()
		for me(s, apptest.Request{Bearer: full}) != http.StatusUnauthorized {
			if time.Since(start) > limit {
				t.Fatalf("the revoked key %s… still authenticates after %v", full[:12], limit)
			}
			time.Sleep(2 * time.Millisecond)
		}
		return time.Since(start)
	}
	// Through the API: A forgets the key before it answers; B on the bus event.
	if status, _, _ := a.Do(t, apptest.Request{Method: "DELETE", Path: fmt.Sprintf("/api/projects/%s/keys/%d", project, keyID(key)), Bearer: token}); status != 204 {
		t.Fatalf("revoke = %d", status)
	}
	if got := me(a, apptest.Request{Bearer: key}); got != http.StatusUnauthorized {
		t.Errorf("revoked key on the revoking instance = %d, want 401 at once", got)
	}
	t.Logf("B refused the revoked key after %v", revokedWithin(b, key, time.Second))
	// Behind the API's back (no bus event): the change log tells B.
	if _, err := a.DB(t).Exec(t.Context(), `DELETE FROM sdk_keys WHERE id = $1`, keyID(other)); err != nil {
		t.Fatal(err)
	}
	t.Logf("B refused a key deleted in SQL after %v", revokedWithin(b, other, 3*time.Second))

	if _, err := a.DB(t).Exec(context.Background(), `DELETE FROM users WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if got := me(b, apptest.Request{Cookie: r.cookie}); got != http.StatusUnauthorized {
		t.Errorf("deleted user's session on B = %d, want 401", got)
	}
	if got := me(b, apptest.Request{Bearer: token}); got != http.StatusUnauthorized {
		t.Errorf("deleted user's token on B = %d, want 401", got)
	}
}

func TestSetupWizard(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	body := map[string]string{"workspace_name": "Acme", "name": "Ada", "email": "ada@example.com", "password": "long enough"}
	// Two browsers racing through the wizard: exactly one wins.
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _, _ = s.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/setup", Body: body})
		}()
	}
	wg.Wait()
	if !(statuses[0] == 200 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 200) {
		t.Fatalf("concurrent setups = %v, want one 200 and one 409", statuses)
	}
	status, raw, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/workspace"})
	if status != 200 || string(raw) != `{"is_setup_complete":true,"workspace_name":"Acme"}`+"\n" {
		t.Errorf("workspace after setup = %d %s", status, raw)
	}
	if r := login(t, s, "ada@example.com", "long enough"); r.status != 200 || r.body["role"] != "admin" {
		t.Errorf("the wizard's admin cannot log in: %d %v", r.status, r.body)
	}
	if status, _, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/setup", Body: body}); status != http.StatusConflict {
		t.Errorf("setup once a user exists = %d, want 409", status)
	}
}
