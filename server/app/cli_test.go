package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/cli"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// runCLI runs the command line with args against s (its URL and token in
// the environment unless env overrides them, a home of its own, env's
// STDIN as its standard input) and returns the exit code, stdout and
// stderr.
func runCLI(t *testing.T, s *apptest.Server, token string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	vars := map[string]string{"SWITCHYARD_URL": s.URL, "SWITCHYARD_TOKEN": token, "HOME": t.TempDir()}
	for k, v := range env {
		vars[k] = v
	}
	var out, errOut bytes.Buffer
	served := errors.New("served")
	code := cli.Run(context.Background(), args, func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		strings.NewReader(vars["STDIN"]), &out, &errOut, func(context.Context) error { return served })
	return code, out.String(), errOut.String()
}

// mustRunCLI is runCLI for a command that must succeed: its stdout.
func mustRunCLI(t *testing.T, s *apptest.Server, token string, args ...string) string {
	t.Helper()
	code, out, errOut := runCLI(t, s, token, nil, args...)
	if code != cli.ExitOK {
		t.Fatalf("%q = %d\n%s%s", args, code, out, errOut)
	}
	return out
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
	// No server there: exit 1, naming the URL and how to give another.
	if code, _, errOut := runCLI(t, s, token, map[string]string{"SWITCHYARD_URL": "http://127.0.0.1:1"}, "projects", "list"); code != cli.ExitError || !strings.Contains(errOut, "cannot reach the server at http://127.0.0.1:1") {
		t.Errorf("unreachable server: %d %q", code, errOut)
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

// The flags commands do what their routes do: create, list, get, change
// by merge patch, toggle, archive and unarchive, promote and delete; a
// refused change names its fields; in an environment that requires
// approval a change opens a change request.
func TestCLIFlags(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	run := func(args ...string) (int, string, string) { t.Helper(); return runCLI(t, s, token, nil, args...) }
	ok := func(args ...string) string { t.Helper(); return mustRunCLI(t, s, token, args...) }
	flag := func(args ...string) map[string]any {
		t.Helper()
		var f map[string]any
		if err := json.Unmarshal([]byte(ok(append(args, "-o", "json")...)), &f); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return f
	}
	file := filepath.Join(t.TempDir(), "banner.yaml")
	if err := os.WriteFile(file, []byte("flag_type: string\ndefault_value: hello\ndescription: the banner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f := flag("flags", "create", "banner", "-f", file, "--env", "staging"); f["default_value"] != "hello" || f["flag_type"] != "string" {
		t.Errorf("created %v", f)
	}
	ok("flags", "create", "new-checkout", "--env", "staging")
	if code, out, errOut := runCLI(t, s, token, map[string]string{"STDIN": `{"flag_type": "integer", "default_value": 3}`}, "flags", "create", "retries", "-f", "-", "--env", "staging", "-o", "json"); code != cli.ExitOK || !strings.Contains(out, `"default_value": 3`) {
		t.Errorf("create from stdin: %d %q %q", code, out, errOut)
	}
	if out := ok("flags", "list", "--env", "staging"); !strings.Contains(out, "banner") || !strings.Contains(out, "new-checkout") {
		t.Errorf("flags list:\n%s", out)
	}
	if f := flag("flags", "update", "new-checkout", "--env", "staging", "--patch", "{rollout_percentage: 25, is_enabled: true}"); f["rollout_percentage"] != 25.0 || f["is_enabled"] != true {
		t.Errorf("updated %v", f)
	}
	if f := flag("flags", "toggle", "new-checkout", "off", "--env", "staging"); f["is_enabled"] != false || f["rollout_percentage"] != 25.0 {
		t.Errorf("toggled %v", f)
	}
	if f := flag("flags", "get", "new-checkout", "--project", "default", "--env", "staging"); f["version"] != 3.0 {
		t.Errorf("got version %v, want 3 (created, updated, toggled)", f["version"])
	}
	code, _, errOut := run("flags", "update", "new-checkout", "--env", "staging", "--patch", `{"rollout_percentage": 101}`)
	if code != cli.ExitError || !strings.Contains(errOut, "rollout_percentage") || !strings.Contains(errOut, "422") {
		t.Errorf("invalid patch: %d %q", code, errOut)
	}
	ok("flags", "archive", "banner", "--env", "staging")
	if out := ok("flags", "list", "--env", "staging", "--archived"); !strings.Contains(out, "banner") || strings.Contains(out, "new-checkout") {
		t.Errorf("archived flags:\n%s", out)
	}
	ok("flags", "unarchive", "banner", "--env", "staging")
	if f := flag("flags", "promote", "new-checkout", "--env", "staging", "--to", "production"); f["rollout_percentage"] != 25.0 {
		t.Errorf("promoted %v", f)
	}
	if out := ok("flags", "delete", "banner", "--env", "staging"); !strings.Contains(out, "deleted banner") {
		t.Errorf("delete: %q", out)
	}
	if code, _, errOut := run("flags", "get", "banner", "--env", "staging"); code != cli.ExitError || !strings.Contains(errOut, "404") {
		t.Errorf("get a deleted flag: %d %q", code, errOut)
	}

	// Approval: the change becomes a change request, the flag stays.
	fe := &flagEnv{s: s, token: token, envs: map[string]string{}}
	_, envs := s.DefaultProject(t)
	fe.envs["production"] = envs["production"].String()
	fe.requireApproval(t, "production", true)
	if out := ok("flags", "toggle", "new-checkout", "on", "--env", "production"); !strings.Contains(out, "change request") {
		t.Errorf("toggle under approval: %q", out)
	}
	if f := flag("flags", "get", "new-checkout", "--env", "production"); f["is_enabled"] != false {
		t.Errorf("the flag changed before approval: %v", f)
	}
	for _, args := range [][]string{
		{"flags", "list"},                    // no --env
		{"flags", "get", "--env", "staging"}, // no key
		{"flags", "toggle", "new-checkout", "maybe", "--env", "staging"},
		{"flags", "update", "new-checkout", "--env", "staging"},  // no patch
		{"flags", "promote", "new-checkout", "--env", "staging"}, // no --to
	} {
		if code, _, errOut := run(args...); code != cli.ExitUsage || errOut == "" {
			t.Errorf("%q = %d %q, want exit 2", args, code, errOut)
		}
	}
	if code, _, errOut := run("flags", "list", "--env", "nowhere"); code != cli.ExitError || !strings.Contains(errOut, "nowhere") {
		t.Errorf("unknown environment: %d %q", code, errOut)
	}
}

// Segments, change requests and flag status over the command line: a
// segment's life; a change opened under approval, listed, approved by
// another admin and applied, another rejected; each flag's status.
func TestCLISegmentsChangeRequestsStatus(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	_, reviewer := s.User(t, "reviewer@example.com", "admin")
	ok := func(tok string, args ...string) string { t.Helper(); return mustRunCLI(t, s, tok, args...) }
	rules := filepath.Join(t.TempDir(), "beta.yaml")
	if err := os.WriteFile(rules, []byte("rules:\n  - {attribute: email, operator: ends_with, values: ['@acme.com']}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok(token, "segments", "create", "beta", "--name", "Beta testers", "-f", rules, "--env", "production")
	if out := ok(token, "segments", "list", "--env", "production"); !strings.Contains(out, "Beta testers") {
		t.Errorf("segments list:\n%s", out)
	}
	ok(token, "segments", "update", "beta", "--patch", "{name: Beta}", "--env", "production")
	if out := ok(token, "segments", "get", "beta", "--env", "production", "-o", "yaml"); !strings.Contains(out, "name: Beta\n") || !strings.Contains(out, "ends_with") {
		t.Errorf("segment:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "segments", "create", "beta2", "--env", "production"); code != cli.ExitError || !strings.Contains(errOut, "name") {
		t.Errorf("a segment without a name: %d %q", code, errOut)
	}
	ok(token, "segments", "delete", "beta", "--env", "production")

	ok(token, "flags", "create", "checkout", "--env", "production")
	fe := &flagEnv{s: s, envs: map[string]string{}}
	_, envs := s.DefaultProject(t)
	fe.envs["production"] = envs["production"].String()
	fe.requireApproval(t, "production", true)
	ok(token, "flags", "toggle", "checkout", "on", "--env", "production")
	ok(token, "flags", "update", "checkout", "--patch", "{rollout_percentage: 5}", "--env", "production")
	var pending []struct {
		ID      int64  `json:"id"`
		FlagKey string `json:"flag_key"`
	}
	if err := json.Unmarshal([]byte(ok(token, "change-requests", "list", "--env", "production", "--status", "pending", "-o", "json")), &pending); err != nil || len(pending) != 2 {
		t.Fatalf("pending change requests: %v %v", pending, err)
	}
	first, second := strconv.FormatInt(pending[1].ID, 10), strconv.FormatInt(pending[0].ID, 10) // newest first
	if code, _, errOut := runCLI(t, s, token, nil, "change-requests", "approve", first, "--env", "production"); code != cli.ExitError || !strings.Contains(errOut, "403") {
		t.Errorf("approving one's own change request: %d %q", code, errOut)
	}
	if out := ok(reviewer, "change-requests", "approve", first, "--env", "production", "-o", "json"); !strings.Contains(out, `"is_enabled": true`) {
		t.Errorf("approved: %s", out)
	}
	if out := ok(reviewer, "change-requests", "reject", second, "--reason", "not now", "--env", "production"); !strings.Contains(out, "rejected change request "+second) {
		t.Errorf("rejected: %q", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "change-requests", "approve", "x", "--env", "production"); code != cli.ExitUsage || errOut == "" {
		t.Errorf("a bad change request id: %d %q", code, errOut)
	}
	if out := ok(token, "status", "--env", "production"); !strings.Contains(out, "checkout") || !strings.Contains(out, "new") {
		t.Errorf("status:\n%s", out)
	}
}

// Releases over the command line: started from a file, listed, read,
// paused, resumed and rolled back; a second start is refused, and so is a
// file the server finds invalid.
func TestCLIReleases(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil, app.WithoutScheduler())
	_, token := s.User(t, "admin@example.com", "admin")
	ok := func(args ...string) string { t.Helper(); return mustRunCLI(t, s, token, args...) }
	dir := t.TempDir()
	release := filepath.Join(dir, "release.yaml")
	if err := os.WriteFile(release, []byte(`stages: [{percentage: 10, duration_seconds: 3600}, {percentage: 50, duration_seconds: 3600}]
metrics: [{event_key: checkout-error, kind: conversion, bad_direction: increase, tolerance: 0.02}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("stages: [{percentage: 50, duration_seconds: 60}, {percentage: 10, duration_seconds: 60}]\nmetrics: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok("flags", "create", "checkout", "--enabled", "--env", "production")
	if code, _, errOut := runCLI(t, s, token, nil, "releases", "start", "checkout", "-f", bad, "--env", "production"); code != cli.ExitError || !strings.Contains(errOut, "422") {
		t.Errorf("an invalid release: %d %q", code, errOut)
	}
	var started struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(ok("releases", "start", "checkout", "-f", release, "--env", "production", "-o", "json")), &started); err != nil || started.Status != "running" {
		t.Fatalf("started %+v %v", started, err)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "releases", "start", "checkout", "-f", release, "--env", "production"); code != cli.ExitError || !strings.Contains(errOut, "409") {
		t.Errorf("a second release of the flag: %d %q", code, errOut)
	}
	if out := ok("releases", "list", "--env", "production", "--status", "running"); !strings.Contains(out, started.ID) || !strings.Contains(out, "1 of 2") {
		t.Errorf("releases list:\n%s", out)
	}
	if f := ok("flags", "get", "checkout", "--env", "production", "-o", "json"); !strings.Contains(f, `"rollout_percentage": 10`) {
		t.Errorf("the release did not set the first stage: %s", f)
	}
	for _, step := range []struct{ action, status string }{{"pause", "paused"}, {"resume", "running"}, {"rollback", "rolled_back"}} {
		if out := ok("releases", step.action, started.ID, "--env", "production"); !strings.Contains(out, step.status) {
			t.Errorf("%s:\n%s", step.action, out)
		}
	}
	if out := ok("releases", "get", started.ID, "--env", "production", "-o", "yaml"); !strings.Contains(out, "status: rolled_back") {
		t.Errorf("get:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "releases", "cancel", started.ID, "--env", "production"); code != cli.ExitError || !strings.Contains(errOut, "409") {
		t.Errorf("cancelling a rolled-back release: %d %q", code, errOut)
	}
	if code, _, _ := runCLI(t, s, token, nil, "releases", "get", "not-a-uuid", "--env", "production"); code != cli.ExitUsage {
		t.Errorf("a bad release id: exit %d, want 2", code)
	}
}

// Tokens, SDK keys and members over the command line: each made, listed
// and taken away; a secret shown once; a read_only token refused a write.
func TestCLITokensKeysMembers(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	bob, _ := s.User(t, "bob@example.com", "viewer")
	ok := func(tok string, args ...string) string { t.Helper(); return mustRunCLI(t, s, tok, args...) }
	var made struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(ok(token, "tokens", "create", "--name", "ci", "--scope", "read_only", "--expires-in-days", "30", "-o", "json")), &made); err != nil || made.Token == "" {
		t.Fatalf("token made: %+v %v", made, err)
	}
	if out := ok(token, "tokens", "list"); !strings.Contains(out, "ci") || !strings.Contains(out, "read_only") || strings.Contains(out, made.Token) {
		t.Errorf("tokens list (the secret must not show):\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, made.Token, nil, "flags", "create", "x", "--env", "production"); code != cli.ExitError || !strings.Contains(errOut, "403") {
		t.Errorf("a read_only token's write: %d %q", code, errOut)
	}
	ok(made.Token, "flags", "list", "--env", "production")
	ok(token, "tokens", "delete", strconv.FormatInt(made.ID, 10))
	if code, _, _ := runCLI(t, s, made.Token, nil, "flags", "list", "--env", "production"); code != cli.ExitError {
		t.Errorf("a deleted token still works: exit %d", code)
	}

	var key struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(ok(token, "keys", "create", "--env", "staging", "--name", "checkout-service", "-o", "json")), &key); err != nil || key.Key == "" {
		t.Fatalf("key made: %+v %v", key, err)
	}
	if out := ok(token, "keys", "list", "--project", "default"); !strings.Contains(out, "checkout-service") || strings.Contains(out, key.Key) {
		t.Errorf("keys list:\n%s", out)
	}
	ok(token, "keys", "revoke", strconv.FormatInt(key.ID, 10), "--project", "default")
	if out := ok(token, "keys", "list", "--project", "default"); strings.Contains(out, "checkout-service") {
		t.Errorf("a revoked key is listed:\n%s", out)
	}

	user := strconv.FormatInt(bob, 10)
	ok(token, "members", "add", user, "--project", "default", "--role", "editor")
	ok(token, "members", "update", user, "--project", "default", "--role", "admin")
	if out := ok(token, "members", "list", "--project", "default"); !strings.Contains(out, "bob@example.com") || !strings.Contains(out, "admin") {
		t.Errorf("members list:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "members", "update", user, "--project", "default", "--role", "owner"); code != cli.ExitError || !strings.Contains(errOut, "422") {
		t.Errorf("an unknown role: %d %q", code, errOut)
	}
	ok(token, "members", "remove", user, "--project", "default")
	if out := ok(token, "members", "list", "--project", "default"); strings.Contains(out, "bob@example.com") {
		t.Errorf("a removed member is listed:\n%s", out)
	}
	if code, _, _ := runCLI(t, s, token, nil, "members", "list"); code != cli.ExitUsage {
		t.Errorf("members list without --project: exit %d, want 2", code)
	}
}

// The audit trail over the command line: the writes made through it are
// listed by actor and action, and the trail verifies.
func TestCLIAudit(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	ok := func(args ...string) string { t.Helper(); return mustRunCLI(t, s, token, args...) }
	ok("flags", "create", "checkout", "--env", "production")
	ok("flags", "toggle", "checkout", "on", "--env", "production")
	out := ok("audit", "list", "--actor", "admin@example.com", "--action", "flag.updated", "--all")
	if !strings.Contains(out, "flag.updated") || !strings.Contains(out, "checkout") || strings.Contains(out, "flag.created") {
		t.Errorf("audit list:\n%s", out)
	}
	if out := ok("audit", "verify"); !strings.Contains(out, "ok") {
		t.Errorf("audit verify:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "audit", "list", "--from", "yesterday"); code != cli.ExitUsage || !strings.Contains(errOut, "RFC 3339") {
		t.Errorf("a bad --from: %d %q", code, errOut)
	}
}

// login saves a profile, private, after the server took the token, and the
// commands after it use the profile; a token the server refuses is not
// saved.
func TestCLILogin(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	config := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": config, "SWITCHYARD_URL": "", "SWITCHYARD_TOKEN": ""}
	path := filepath.Join(config, "switchyard", "config.yaml")
	if code, _, errOut := runCLI(t, s, "", env, "login", "--url", s.URL, "--token", "syk_pat_wrong"); code != cli.ExitError || !strings.Contains(errOut, "did not take the token") {
		t.Errorf("login with a refused token: %d %q", code, errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused token was saved: %v", err)
	}
	piped := map[string]string{"XDG_CONFIG_HOME": config, "SWITCHYARD_URL": "", "SWITCHYARD_TOKEN": "", "STDIN": token + "\n"}
	if code, out, errOut := runCLI(t, s, "", piped, "login", "--url", s.URL, "--profile", "work"); code != cli.ExitOK || !strings.Contains(out, `"work"`) {
		t.Fatalf("login from stdin: %d %q %q", code, out, errOut)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v, want mode 0600", info, err)
	}
	if code, out, errOut := runCLI(t, s, "", env, "projects", "list", "--profile", "work"); code != cli.ExitOK || !strings.Contains(out, "default") {
		t.Errorf("after login: %d %q %q", code, out, errOut)
	}
}

// eval evaluates here as the server does: for users in and out of a
// segment, a rule and a rollout, its value and reason equal the server's
// own OFREP evaluation, and it names the rule that matched, through its
// segment.
func TestCLIEval(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	_, envs := s.DefaultProject(t)
	sdk := s.SDKKey(t, envs["production"])
	ok := func(args ...string) string { t.Helper(); return mustRunCLI(t, s, token, args...) }
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok("segments", "create", "acme", "--name", "Acme", "--env", "production",
		"-f", write("acme.yaml", "rules:\n  - {attribute: email, operator: ends_with, values: ['@acme.com']}\n  - {attribute: company, operator: equals, values: [acme]}\n"))
	ok("flags", "create", "banner", "--env", "production", "--enabled", "-f", write("banner.yaml", `flag_type: string
default_value: plain
rollout_percentage: 50
rules:
  - {attribute: age, operator: greater_than, values: ["40"], variant: "wise"}
  - {segment_key: acme, values: [], variant: "acme"}
`))
	type answer struct {
		Value  any    `json:"value"`
		Reason string `json:"reason"`
		Rule   *struct {
			Index        int    `json:"index"`
			Segment      string `json:"segment"`
			SegmentIndex *int   `json:"segment_rule_index"`
		} `json:"rule"`
	}
	cases := []struct {
		user  string
		attrs map[string]any
	}{
		{"u1", map[string]any{"age": 55}},
		{"u2", map[string]any{"email": "ann@acme.com"}},
		{"u3", map[string]any{"company": "acme", "age": 20}},
		{"u4", nil}, {"u5", nil}, {"u6", nil}, {"u7", nil}, {"u8", nil},
		{"", nil},
	}
	for _, c := range cases {
		args := []string{"eval", "banner", "--env", "production", "-o", "json"}
		if c.user != "" {
			args = append(args, "--user", c.user)
		}
		for k, v := range c.attrs {
			raw, _ := json.Marshal(v)
			args = append(args, "--attr", k+"="+string(raw))
		}
		var got answer
		if err := json.Unmarshal([]byte(ok(args...)), &got); err != nil {
			t.Fatal(err)
		}
		ctxBody := map[string]any{"targetingKey": c.user}
		for k, v := range c.attrs {
			ctxBody[k] = v
		}
		status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags/banner", Bearer: sdk, Body: map[string]any{"context": ctxBody}})
		var server struct {
			Value  any    `json:"value"`
			Reason string `json:"reason"`
		}
		if status != 200 || json.Unmarshal(raw, &server) != nil {
			t.Fatalf("OFREP %s = %d %s", c.user, status, raw)
		}
		if got.Value != server.Value {
			t.Errorf("user %q %v: eval says %v (%s), the server %v (%s)", c.user, c.attrs, got.Value, got.Reason, server.Value, server.Reason)
		}
		switch c.user {
		case "u1":
			if got.Reason != "RULE_MATCH" || got.Rule == nil || got.Rule.Index != 0 || got.Rule.Segment != "" {
				t.Errorf("u1: %+v", got)
			}
		case "u2", "u3":
			want := map[string]int{"u2": 0, "u3": 1}[c.user]
			if got.Rule == nil || got.Rule.Index != 1 || got.Rule.Segment != "acme" || got.Rule.SegmentIndex == nil || *got.Rule.SegmentIndex != want {
				t.Errorf("%s: rule %+v, want rules.1 through acme's rule %d", c.user, got.Rule, want)
			}
		}
	}
	if out := ok("eval", "banner", "--env", "production", "--user", "u1", "--attr", "age=55"); !strings.Contains(out, `"wise"`) || !strings.Contains(out, "rules.0") {
		t.Errorf("eval table:\n%s", out)
	}
	if code, _, _ := runCLI(t, s, token, nil, "eval", "banner", "--env", "production", "--attr", "novalue"); code != cli.ExitUsage {
		t.Errorf("an attribute without =: exit %d, want 2", code)
	}
}

// Projects and environments are created, changed and deleted through their
// routes; the routes' refusals come back as exit 1 with the server's
// message.
func TestCLIProjectAndEnvironmentWrites(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	_, viewer := s.User(t, "viewer@example.com", "viewer")
	ok := func(args ...string) string { t.Helper(); return mustRunCLI(t, s, token, args...) }

	if out := ok("projects", "create", "Acme Shop"); !strings.Contains(out, "acme-shop") || !strings.Contains(out, "sk_live_") {
		t.Errorf("projects create:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, viewer, nil, "projects", "create", "Other"); code != cli.ExitError || !strings.Contains(errOut, "403") {
		t.Errorf("a viewer creating a project: %d %q", code, errOut)
	}
	if out := ok("environments", "create", "qa", "--project", "acme-shop", "--color", "#123456"); !strings.Contains(out, "#123456") {
		t.Errorf("environments create:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "environments", "create", "qa", "--project", "acme-shop"); code != cli.ExitError || !strings.Contains(errOut, "409") {
		t.Errorf("a second qa: %d %q", code, errOut)
	}
	if out := ok("environments", "update", "--project", "acme-shop", "--env", "qa", "--name", "Quality", "-o", "json"); !strings.Contains(out, `"name": "Quality"`) {
		t.Errorf("environments update:\n%s", out)
	}
	if out := ok("environments", "require-approval", "on", "--project", "acme-shop", "--env", "qa", "-o", "json"); !strings.Contains(out, `"require_approval": true`) {
		t.Errorf("require-approval on:\n%s", out)
	}
	if out := ok("environments", "set-default", "--project", "acme-shop", "--env", "qa", "-o", "json"); !strings.Contains(out, `"is_default": true`) {
		t.Errorf("set-default:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "environments", "delete", "--project", "acme-shop", "--env", "qa"); code != cli.ExitError || !strings.Contains(errOut, "default environment") {
		t.Errorf("deleting the default environment: %d %q", code, errOut)
	}
	ok("environments", "delete", "--project", "acme-shop", "--env", "staging")
	if out := ok("environments", "list", "--project", "acme-shop"); strings.Contains(out, "staging") || !strings.Contains(out, "Quality") {
		t.Errorf("after delete:\n%s", out)
	}
	if code, _, _ := runCLI(t, s, token, nil, "environments", "update", "--project", "acme-shop", "--env", "qa"); code != cli.ExitUsage {
		t.Errorf("update with nothing to change = %d, want 2", code)
	}
	if out := ok("projects", "rename", "acme-shop", "Acme Store"); !strings.Contains(out, "acme-store") {
		t.Errorf("projects rename:\n%s", out)
	}
	ok("projects", "delete", "acme-store")
	if out := ok("projects", "list"); strings.Contains(out, "acme") {
		t.Errorf("after delete:\n%s", out)
	}
}
