package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

func TestHealth(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	resp, body := get(t, s.URL+"/health")
	if resp.StatusCode != http.StatusOK || string(body) != "OK" {
		t.Fatalf("GET /health = %d %q, want 200 OK", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want text/plain", ct)
	}
}

func TestWorkspaceBeforeAndAfterAdmin(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		want map[string]any
	}{
		{"no admin configured", nil, map[string]any{"workspace_name": "Switchyard", "is_setup_complete": false}},
		{"admin from environment", map[string]string{
			"ADMIN_EMAIL": "ops@example.com", "ADMIN_PASSWORD": "correct horse", "WORKSPACE_NAME": "Acme",
		}, map[string]any{"workspace_name": "Acme", "is_setup_complete": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := apptest.Start(t, c.env)
			resp, err := s.Client.GetWorkspace(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("workspace (-want +got):\n%s", d)
			}
		})
	}
}

// The first boot writes the full Production SDK key to the log once; a
// second instance on the same database (or a restart) seeds nothing again.
func TestFirstBootKeyLoggedOnce(t *testing.T) {
	t.Parallel()
	a := apptest.Start(t, nil)
	lines := a.LogLines("first boot: created the Production SDK key of the Default project")
	if len(lines) != 1 {
		t.Fatalf("first instance logged the key %d times, want 1; logs:\n%s", len(lines), a.Logs())
	}
	var entry struct {
		Level  string `json:"level"`
		SDKKey string `json:"sdk_key"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
		t.Fatal(err)
	}
	if entry.Level != "INFO" || !strings.HasPrefix(entry.SDKKey, "sk_live_") {
		t.Errorf("key log line = %+v, want INFO with an sk_live_ key", entry)
	}
	b := apptest.Start(t, map[string]string{"DATABASE_URL": a.DBURL})
	if n := len(b.LogLines("first boot: created the Production SDK key of the Default project")); n != 0 {
		t.Errorf("second instance logged a key %d times, want 0", n)
	}
	if strings.Contains(b.Logs(), entry.SDKKey) {
		t.Error("second instance logged the existing key")
	}
}

func TestOpenAPIDocumentServed(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	resp, body := get(t, s.URL+"/api/openapi.json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("document is not JSON: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	for _, r := range contractRoutes {
		if _, ok := doc.Paths[r.path][strings.ToLower(r.method)]; !ok {
			t.Errorf("served document lacks %s %s", r.method, r.path)
		}
	}
}

func TestRunRejectsArguments(t *testing.T) {
	t.Parallel()
	err := app.Run(context.Background(), []string{"switchyard", "--port=1"}, func(string) (string, bool) { return "", false }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "environment variables only") {
		t.Fatalf("Run with arguments = %v, want an error about environment configuration", err)
	}
}

func TestRunRefusesDefaultSecretWithSecureCookies(t *testing.T) {
	t.Parallel()
	env := map[string]string{"COOKIE_SECURE": "true", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"}
	err := app.Run(context.Background(), []string{"switchyard"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SESSION_SECRET") {
		t.Fatalf("Run = %v, want a refusal naming SESSION_SECRET", err)
	}
}

func TestGracefulStop(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	s.Stop() // the harness fails the test if Serve returns an error or hangs
	if _, err := http.Get(s.URL + "/health"); err == nil {
		t.Fatal("server still answers after Stop")
	}
}
