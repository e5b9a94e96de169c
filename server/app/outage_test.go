package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// outageProbe is one request the outage test sends while PostgreSQL is down
// and again after it returns.
type outageProbe struct {
	name   string
	method string
	path   string
	bearer string
	cookie *http.Cookie
	header map[string]string
	body   func() any // a fresh body per attempt (project names must differ)
	// up is the status expected with the database up.
	up int
	// cached marks a probe that may be answered without the database (an SDK
	// key looked up a moment before, a snapshot the hub holds): 200 is then
	// as right as 503 during the outage.
	cached bool
}

// outageReply is what the test looks at in one answer.
type outageReply struct {
	status  int
	header  http.Header
	body    []byte
	elapsed time.Duration
}

// TestDatabaseOutageAnswers503 stops the test's own PostgreSQL (never the
// shared one), first cleanly and then as a crash, and checks that every
// request that needs the database answers 503 with Retry-After and a JSON
// error body: never 500 (a bug), and never 401/403/404 for a valid
// credential (an SDK that gets 401 drops its key). /health says 503 too.
// When PostgreSQL returns, everything answers as before, by itself.
func TestDatabaseOutageAnswers503(t *testing.T) {
	pg := testenv.StartPostgres(t)
	s := apptest.Start(t, map[string]string{"DATABASE_URL": pg.URL})
	project, envs := s.DefaultProject(t)
	prod := envs["production"]
	_, pat := s.User(t, "ops@example.com", "admin")
	r := login(t, s, "ops@example.com", "password123")
	if r.status != http.StatusOK || r.cookie == nil {
		t.Fatalf("login = %d %v", r.status, r.body)
	}
	cookie := r.cookie
	usedKey := s.SDKKey(t, prod)
	now := time.Now().UTC()
	n := 0
	unique := func() int { n++; return n }

	// probes are built per phase: each phase gets SDK keys never used
	// before, so that their lookup needs the database.
	probes := func(freshKey string) []outageProbe {
		envPath := "/api/environments/" + prod.String()
		return []outageProbe{
			{name: "health", method: "GET", path: "/health", up: 200},
			{name: "api with a token", method: "GET", path: "/api/projects", bearer: pat, up: 200},
			{name: "api with a session", method: "GET", path: envPath + "/flags", cookie: cookie, up: 200},
			{name: "me with a session", method: "GET", path: "/api/auth/me", cookie: cookie, up: 200},
			{name: "write with a token", method: "POST", path: "/api/projects", bearer: pat, up: 200,
				body: func() any { return map[string]string{"name": fmt.Sprintf("Outage %d", unique())} }},
			{name: "write with a session", method: "PATCH", path: "/api/projects/" + project.String(), cookie: cookie, up: 200,
				header: map[string]string{"X-Service-Request": "true"},
				body:   func() any { return map[string]string{"name": fmt.Sprintf("Default %d", unique())} }},
			{name: "login", method: "POST", path: "/api/auth/login", up: 200,
				body: func() any { return map[string]string{"email": "ops@example.com", "password": "password123"} }},
			{name: "snapshot with a new key", method: "GET", path: "/flags/snapshot", bearer: freshKey, up: 200},
			{name: "snapshot with a key in use", method: "GET", path: "/flags/snapshot", bearer: usedKey, up: 200, cached: true},
			{name: "stream with a new key", method: "GET", path: "/stream", bearer: freshKey, up: 200},
			{name: "stream with a new key in the query", method: "GET", path: "/stream?sdk_key=" + freshKey, up: 200},
			{name: "stream with a token", method: "GET", path: "/stream?environment_id=" + prod.String(), bearer: pat, up: 200},
			{name: "impressions", method: "POST", path: envPath + "/impressions", bearer: freshKey, up: 204,
				body: func() any { return []any{imp("outage", "u1", "true", now)} }},
			{name: "events", method: "POST", path: envPath + "/events", bearer: freshKey, up: 204,
				body: func() any { return []any{goal("outage", "u1", now)} }},
		}
	}

	// Everything works before the outage; the used key is now cached.
	for _, p := range probes(s.SDKKey(t, prod)) {
		if got := sendProbe(t, s, p); got.status != p.up {
			t.Fatalf("before the outage, %s = %d %s, want %d", p.name, got.status, got.body, p.up)
		}
	}

	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			ps := probes(s.SDKKey(t, prod))
			pg.Stop(t, mode)

			// /health caches its answer for a moment, so poll it; every
			// other route must answer 503 at once. Twice: the first
			// attempt finds the pool's dead connections, the second a
			// refused connect.
			deadline := time.Now().Add(10 * time.Second)
			for got := sendProbe(t, s, ps[0]); got.status != http.StatusServiceUnavailable; got = sendProbe(t, s, ps[0]) {
				if time.Now().After(deadline) {
					t.Errorf("/health = %d %s 10 s into the outage, want 503", got.status, got.body)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			var slowest time.Duration
			for attempt := 1; attempt <= 2; attempt++ {
				for _, p := range ps {
					got := sendProbe(t, s, p)
					slowest = max(slowest, got.elapsed)
					if p.cached && got.status == p.up {
						continue
					}
					checkUnavailable(t, fmt.Sprintf("attempt %d: %s", attempt, p.name), got)
				}
			}
			// The error writer logs 500s as "request failed"; an outage is
			// logged as a warning only.
			if lines := s.LogLines("request failed"); len(lines) > 0 {
				t.Errorf("the outage was logged as a fault of ours:\n%s", strings.Join(lines, "\n"))
			}
			t.Logf("slowest answer during the outage: %v", slowest)
			if slowest > 5*time.Second {
				t.Errorf("an answer during the outage took %v; want it to fail fast", slowest)
			}

			pg.Start(t)
			start := time.Now()
			waitOutage(t, 30*time.Second, "every route to answer as before", func() (bool, string) {
				for _, p := range ps {
					if got := sendProbe(t, s, p); got.status != p.up {
						return false, fmt.Sprintf("%s = %d %s", p.name, got.status, got.body)
					}
				}
				return true, ""
			})
			t.Logf("recovered %v after PostgreSQL accepted connections again", time.Since(start))
		})
	}
}

// checkUnavailable fails the test unless got is an outage answer: 503, a
// Retry-After of whole seconds, and a JSON {"error": "..."} body.
func checkUnavailable(t *testing.T, what string, got outageReply) {
	t.Helper()
	if got.status != http.StatusServiceUnavailable {
		t.Errorf("%s = %d %s, want 503", what, got.status, got.body)
		return
	}
	if s, err := strconv.Atoi(got.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("%s: Retry-After = %q, want whole seconds", what, got.header.Get("Retry-After"))
	}
	if ct := got.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type = %q, want application/json", what, ct)
	}
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(got.body, &body); err != nil || body.Error == "" {
		t.Errorf("%s: body %s is not {\"error\": \"...\"} (%v)", what, got.body, err)
	}
}

// sendProbe sends p without apptest's contract check: 503 is an answer any
// route may give during an outage, which the document states once rather
// than on every operation. A stream that opens is read up to its ready
// event, then closed.
func sendProbe(t *testing.T, s *apptest.Server, p outageProbe) outageReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var body io.Reader
	if p.body != nil {
		raw, err := json.Marshal(p.body())
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, s.URL+p.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+p.bearer)
	}
	if p.cookie != nil {
		req.AddCookie(p.cookie)
	}
	for k, v := range p.header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	defer resp.Body.Close()
	reply := outageReply{status: resp.StatusCode, header: resp.Header, elapsed: time.Since(start)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() == "event: ready" {
				return reply
			}
		}
		t.Fatalf("%s: stream ended before its ready event: %v", p.name, sc.Err())
	}
	reply.body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read body: %v", p.name, err)
	}
	return reply
}

// waitOutage polls cond until it holds, failing the test with cond's last
// explanation after timeout.
func waitOutage(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last: %s", timeout, what, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
