package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/cli"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// runCLI runs the command line with args against s (its URL and token in
// the environment unless env overrides them, a home of its own) and
// returns the exit code, stdout and stderr.
func runCLI(t *testing.T, s *apptest.Server, token string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	vars := map[string]string{"SWITCHYARD_URL": s.URL, "SWITCHYARD_TOKEN": token, "HOME": t.TempDir()}
	for k, v := range env {
		vars[k] = v
	}
	var out, errOut bytes.Buffer
	served := errors.New("served")
	code := cli.Run(context.Background(), args, func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		&out, &errOut, func(context.Context) error { return served })
	return code, out.String(), errOut.String()
}

// The command line lists projects and environments through the API, as a
// table and as JSON, and maps refusals and misuse to exit codes 1 and 2.
func TestCLIProjectsAndEnvironments(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")

	code, out, errOut := runCLI(t, s, token, nil, "projects", "list")
	if code != cli.ExitOK || !strings.Contains(out, "SLUG") || !strings.Contains(out, "default") {
		t.Fatalf("projects list = %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, s, token, nil, "environments", "list", "--project", "default", "-o", "json")
	var envs []struct{ Slug string }
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &envs) != nil || len(envs) == 0 {
		t.Fatalf("environments list -o json = %d %q", code, out)
	}
	slugs := []string{}
	for _, e := range envs {
		slugs = append(slugs, e.Slug)
	}
	if !strings.Contains(strings.Join(slugs, ","), "production") {
		t.Errorf("environments of default: %v", slugs)
	}
	code, out, _ = runCLI(t, s, token, nil, "projects", "list", "-o", "yaml")
	if code != cli.ExitOK || !strings.Contains(out, "slug: default") {
		t.Errorf("projects list -o yaml = %d %q", code, out)
	}

	// A bad token: the server's refusal on stderr, exit 1.
	code, _, errOut = runCLI(t, s, "syk_pat_not-a-token", nil, "projects", "list")
	if code != cli.ExitError || !strings.Contains(errOut, "401") || !strings.Contains(errOut, "--token") {
		t.Errorf("with a bad token: %d %q", code, errOut)
	}
	// An unknown project: exit 1 with what to do.
	if code, _, errOut = runCLI(t, s, token, nil, "environments", "list", "--project", "nope"); code != cli.ExitError || !strings.Contains(errOut, "projects list") {
		t.Errorf("unknown project: %d %q", code, errOut)
	}
	// Misuse: exit 2.
	for _, args := range [][]string{{"nope"}, {"projects"}, {"projects", "list", "extra"}, {"projects", "list", "--nope"}, {"environments", "list"}, {"projects", "list", "-o", "xml"}} {
		if code, _, errOut := runCLI(t, s, token, nil, args...); code != cli.ExitUsage || errOut == "" {
			t.Errorf("%q = %d %q, want exit 2 with a message", args, code, errOut)
		}
	}
	// No command serves; so does serve.
	for _, args := range [][]string{nil, {"serve"}} {
		if code, _, errOut := runCLI(t, s, token, nil, args...); code != cli.ExitError || !strings.Contains(errOut, "served") {
			t.Errorf("%q = %d %q, want the serve function's result", args, code, errOut)
		}
	}
}

// The server and token come from the flags, else the environment, else the
// chosen profile of the config file.
func TestCLIProfiles(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	config := t.TempDir()
	if err := os.MkdirAll(filepath.Join(config, "switchyard"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "switchyard", "config.yaml"),
		[]byte("profiles:\n  default:\n    url: "+s.URL+"\n    token: "+token+"\n  stale:\n    url: "+s.URL+"\n    token: syk_pat_gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": config, "SWITCHYARD_URL": "", "SWITCHYARD_TOKEN": ""}
	if code, out, errOut := runCLI(t, s, "", env, "projects", "list"); code != cli.ExitOK || !strings.Contains(out, "default") {
		t.Errorf("default profile: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, s, "", env, "projects", "list", "--profile", "stale"); code != cli.ExitError || !strings.Contains(errOut, "401") {
		t.Errorf("stale profile: %d %q", code, errOut)
	}
	if code, out, _ := runCLI(t, s, "", env, "projects", "list", "--profile", "stale", "--token", token); code != cli.ExitOK || !strings.Contains(out, "default") {
		t.Errorf("--token over the profile: %d %q", code, out)
	}
	if code, _, errOut := runCLI(t, s, "", env, "projects", "list", "--profile", "missing"); code != cli.ExitUsage || !strings.Contains(errOut, "missing") {
		t.Errorf("missing profile: %d %q", code, errOut)
	}
}
