package app_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// The dashboard is served from PUBLIC_DIR as a single-page app.
func TestDashboardStaticFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", "<!doctype html><title>Switchyard</title>")
	write("assets/app-3f2a.js", "console.log(1)")
	s := apptest.Start(t, map[string]string{"PUBLIC_DIR": dir})

	cases := []struct {
		path, wantBody, wantCache string
		wantStatus                int
	}{
		{"/", "<title>Switchyard</title>", "no-cache", 200},
		{"/projects/default/flags", "<title>Switchyard</title>", "no-cache", 200}, // client-side route
		{"/assets/app-3f2a.js", "console.log(1)", "immutable", 200},
		{"/api/no-such-route", `"error"`, "", 404},                  // the API never falls back to the page
		{"/api/docs", "<title>Switchyard</title>", "no-cache", 200}, // the API reference is a dashboard page
		{"/api/docs?tag=Flags", "<title>Switchyard</title>", "no-cache", 200},
		{"/api/docs/", `"error"`, "", 404}, // exactly /api/docs; nothing under it
		{"/api/docsx", `"error"`, "", 404},
	}
	for _, c := range cases {
		resp, body := get(t, s.URL+c.path)
		if resp.StatusCode != c.wantStatus || !strings.Contains(string(body), c.wantBody) {
			t.Errorf("GET %s = %d %q, want %d containing %q", c.path, resp.StatusCode, body, c.wantStatus, c.wantBody)
		}
		if cc := resp.Header.Get("Cache-Control"); c.wantCache != "" && !strings.Contains(cc, c.wantCache) {
			t.Errorf("GET %s Cache-Control = %q, want %q", c.path, cc, c.wantCache)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %d, want 405", resp.StatusCode)
	}
}

func TestNoDashboardInstalled(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, map[string]string{"PUBLIC_DIR": filepath.Join(t.TempDir(), "missing")})
	resp, body := get(t, s.URL+"/")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "PUBLIC_DIR") {
		t.Errorf("GET / without a dashboard = %d %s, want 404 naming PUBLIC_DIR", resp.StatusCode, body)
	}
}
