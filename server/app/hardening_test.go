package app_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// hardeningDashboard writes a minimal dashboard into a fresh PUBLIC_DIR.
func hardeningDashboard(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"index.html":       `<!doctype html><title>Switchyard</title><script type="module" src="/assets/app-1.js"></script>`,
		"assets/app-1.js":  "console.log(1)",
		"assets/app-1.css": "body{}",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hardeningRequest is one request of the surface and what it answers.
type hardeningRequest struct {
	method, path string
	header       map[string]string
	body         string
	status       int
	page         bool // a dashboard page (or file): the pages' headers too
}

// do sends hr and returns the response with its body closed. Streams are
// cut once their headers are in.
func (hr hardeningRequest) do(t *testing.T, base string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, hr.method, base+hr.path, strings.NewReader(hr.body))
	if err != nil {
		t.Fatal(err)
	}
	if hr.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hr.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", hr.method, hr.path, err)
	}
	resp.Body.Close()
	return resp
}

// docs/security.md, Browser hardening: every response carries
// X-Content-Type-Options: nosniff, whichever route answers it (the
// API, its errors, the dashboard's files, /health, the document, SCIM,
// OFREP, /stream, /metrics); the dashboard's pages and files also carry
// the Content-Security-Policy, X-Frame-Options and Referrer-Policy.
func TestHardeningHeaders(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnvOn(t, map[string]string{"PUBLIC_DIR": hardeningDashboard(t)})
	s := oe.s
	sdk := map[string]string{"Authorization": "Bearer " + oe.server}
	admin := map[string]string{"Authorization": "Bearer " + oe.admin}
	cases := []hardeningRequest{
		{method: "GET", path: "/", status: 200, page: true},
		{method: "GET", path: "/projects/x/flags", status: 200, page: true}, // the index.html fallback
		{method: "GET", path: "/api/docs", status: 200, page: true},
		{method: "HEAD", path: "/api/docs", status: 200, page: true},
		{method: "GET", path: "/assets/app-1.js", status: 200, page: true},
		{method: "GET", path: "/assets/app-1.css", status: 200, page: true},
		{method: "POST", path: "/", status: 405},
		{method: "GET", path: "/health", status: 200},
		{method: "GET", path: "/api/openapi.json", status: 200},
		{method: "GET", path: "/api/projects", header: admin, status: 200},
		{method: "GET", path: "/api/projects", status: 401},
		{method: "GET", path: "/api/no-such-route", status: 404},
		{method: "POST", path: "/api/auth/login", body: `{"email":`, status: 400},
		{method: "GET", path: "/metrics", status: 200},
		{method: "GET", path: "/scim/v2/Users", status: 401},
		{method: "POST", path: "/ofrep/v1/evaluate/flags/limit", header: sdk, body: `{"context":{"targetingKey":"u1"}}`, status: 200},
		{method: "POST", path: "/ofrep/v1/evaluate/flags", header: sdk, body: `{"context":{"targetingKey":"u1"}}`, status: 200},
		{method: "POST", path: "/ofrep/v1/evaluate/flags/limit", status: 401},
		{method: "GET", path: "/flags/snapshot", header: sdk, status: 200},
		{method: "GET", path: "/stream", header: sdk, status: 200},
		{method: "GET", path: "/stream", status: 401},
	}
	for _, c := range cases {
		resp := c.do(t, s.URL)
		what := c.method + " " + c.path
		if resp.StatusCode != c.status {
			t.Errorf("%s = %d, want %d", what, resp.StatusCode, c.status)
		}
		if got := resp.Header.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
			t.Errorf("%s X-Content-Type-Options = %q, want [nosniff]", what, got)
		}
		if got := resp.Header.Get("Strict-Transport-Security"); got != "" {
			t.Errorf("%s Strict-Transport-Security = %q with COOKIE_SECURE=false, want none", what, got)
		}
		if !c.page {
			continue
		}
		checkPolicy(t, what, resp.Header.Get("Content-Security-Policy"))
		if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("%s X-Frame-Options = %q, want DENY", what, got)
		}
		if got := resp.Header.Get("Referrer-Policy"); got != "same-origin" {
			t.Errorf("%s Referrer-Policy = %q, want same-origin", what, got)
		}
	}
}

// checkPolicy checks a dashboard page's Content-Security-Policy: nothing
// frames it, and scripts come from the server's own files only.
func checkPolicy(t *testing.T, what, csp string) {
	t.Helper()
	directives := map[string][]string{}
	for _, d := range strings.Split(csp, ";") {
		fields := strings.Fields(d)
		if len(fields) > 0 {
			directives[fields[0]] = fields[1:]
		}
	}
	want := map[string]string{"default-src": "'self'", "script-src": "'self'", "frame-ancestors": "'none'", "object-src": "'none'"}
	for name, value := range want {
		if got := strings.Join(directives[name], " "); got != value {
			t.Errorf("%s Content-Security-Policy %s = %q, want %q (policy %q)", what, name, got, value, csp)
		}
	}
	for _, d := range []string{"style-src", "img-src", "connect-src"} {
		for _, src := range directives[d] {
			if src == "*" || strings.Contains(src, "unsafe-eval") || strings.HasPrefix(src, "http") {
				t.Errorf("%s Content-Security-Policy %s allows %s (policy %q)", what, d, src, csp)
			}
		}
	}
}

// With COOKIE_SECURE=true the server is reached over HTTPS (docs/security.md,
// Browser hardening): every response asks the browser to keep to it.
func TestHardeningStrictTransportSecurity(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, map[string]string{
		"COOKIE_SECURE":  "true",
		"SESSION_SECRET": "0123456789abcdef0123456789abcdef-hardening",
		"PUBLIC_DIR":     hardeningDashboard(t),
	})
	for _, c := range []hardeningRequest{
		{method: "GET", path: "/", status: 200, page: true},
		{method: "GET", path: "/api/docs", status: 200, page: true},
		{method: "GET", path: "/health", status: 200},
		{method: "GET", path: "/api/projects", status: 401},
		{method: "POST", path: "/ofrep/v1/evaluate/flags", body: `{}`, status: 401},
		{method: "GET", path: "/metrics", status: 200},
	} {
		resp := c.do(t, s.URL)
		what := c.method + " " + c.path
		if resp.StatusCode != c.status {
			t.Errorf("%s = %d, want %d", what, resp.StatusCode, c.status)
		}
		if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=63072000; includeSubDomains" {
			t.Errorf("%s Strict-Transport-Security = %q, want max-age=63072000; includeSubDomains", what, got)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s X-Content-Type-Options = %q, want nosniff", what, got)
		}
		if c.page {
			checkPolicy(t, what, resp.Header.Get("Content-Security-Policy"))
		}
	}
}
