package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard/switchyard/cli"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// writeFile writes a flags file into the test's directory and returns its
// path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// versions are the versions of an environment's flags by key.
func versions(t *testing.T, s *apptest.Server, token, env string) map[string]int64 {
	t.Helper()
	status, body, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/environments/" + env + "/flags", Bearer: token})
	if status != 200 {
		t.Fatalf("list flags: %d %s", status, body)
	}
	var flags []struct {
		Key     string
		Version int64
	}
	if err := json.Unmarshal(body, &flags); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, f := range flags {
		out[f.Key] = f.Version
	}
	return out
}

// A project holding every flag feature exports to a file that diff finds
// equal to the server, and applying it writes nothing (no version moves).
func TestCLIExportRoundTrip(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	_, envs := s.DefaultProject(t)
	prod := envs["production"].String()
	do := func(method, path string, body any) {
		t.Helper()
		if status, raw, _ := s.Do(t, apptest.Request{Method: method, Path: path, Bearer: token, Body: body}); status != 200 {
			t.Fatalf("%s %s: %d %s", method, path, status, raw)
		}
	}
	do("POST", "/api/environments/"+prod+"/segments", map[string]any{"key": "staff", "name": "Staff", "description": "people of Acme",
		"rules": []any{map[string]any{"attribute": "email", "operator": "ends_with", "values": []string{"@acme.com"}}}})
	for _, f := range []string{
		`{"key": "payments", "is_enabled": true, "description": "the new payment flow", "tags": ["payments", "q3"], "owner_email": "pay@acme.com", "client_side": true}`,
		`{"key": "checkout", "is_enabled": true, "rollout_percentage": 25,
		  "prerequisites": [{"flag_key": "payments", "required_value": true}],
		  "rules": [{"segment_key": "staff"},
		            {"attribute": "plan", "operator": "not_in", "values": ["free"], "rollout_percentage": 50,
		             "conditions": [{"attribute": "country", "operator": "equals", "values": ["DE", "FR"]},
		                            {"attribute": "app_version", "operator": "semver_greater_than_or_equal", "values": ["2.1.0"]}]}]}`,
		`{"key": "banner", "flag_type": "string", "is_enabled": true, "default_value": "hello", "disabled_value": "off",
		  "variants": [{"weight": 3, "value": "a"}, {"weight": 1, "value": "b"}],
		  "rules": [{"attribute": "email", "operator": "regex", "values": ["^.*@acme\\.com$"], "variants": [{"weight": 1, "value": "x"}, {"weight": 1, "value": "y"}]},
		            {"attribute": "signup", "operator": "before", "values": ["2026-01-01T00:00:00Z"], "variant": "early"}]}`,
		`{"key": "limit", "flag_type": "integer", "is_enabled": false, "default_value": 10, "disabled_value": 0,
		  "rules": [{"attribute": "seats", "operator": "greater_than", "values": ["100"], "variant": 1000}]}`,
		`{"key": "layout", "flag_type": "json", "is_enabled": true, "default_value": {"cols": 3, "dense": false, "nested": [1, {"a": "b"}]}}`,
		`{"key": "old-banner", "is_enabled": false}`,
	} {
		do("POST", "/api/environments/"+prod+"/flags", json.RawMessage(f))
	}
	do("POST", "/api/environments/"+prod+"/flags/old-banner/archive", nil)
	before := versions(t, s, token, prod)

	for _, format := range []string{"yaml", "json"} {
		exported := mustRunCLI(t, s, token, "export", "--project", "default", "-o", format)
		if !strings.Contains(exported, "old-banner") || !strings.Contains(exported, "staff") {
			t.Fatalf("export -o %s misses flags:\n%s", format, exported)
		}
		file := writeFile(t, "flags."+format, exported)
		if code, out, errOut := runCLI(t, s, token, nil, "diff", "-f", file); code != cli.ExitOK || !strings.Contains(out, "No changes") {
			t.Fatalf("diff of the export (%s) = %d\n%s%s\n%s", format, code, out, errOut, exported)
		}
		if code, out, errOut := runCLI(t, s, token, nil, "apply", "-f", file, "--yes"); code != cli.ExitOK || !strings.Contains(out, "No changes") {
			t.Fatalf("apply of the export = %d\n%s%s", code, out, errOut)
		}
		if code, out, errOut := runCLI(t, s, token, nil, "validate", "-f", file); code != cli.ExitOK {
			t.Fatalf("validate of the export = %d\n%s%s", code, out, errOut)
		}
	}
	if after := versions(t, s, token, prod); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("versions moved: %v, then %v", before, after)
	}
	// One environment alone.
	out := mustRunCLI(t, s, token, "export", "--project", "default", "--env", "staging")
	if strings.Contains(out, "production") || !strings.Contains(out, "slug: staging") {
		t.Errorf("export --env staging:\n%s", out)
	}
	if code, _, errOut := runCLI(t, s, token, nil, "export", "--project", "nope"); code != cli.ExitError || !strings.Contains(errOut, "nope") {
		t.Errorf("export of an unknown project: %d %q", code, errOut)
	}
}

const shopFile = `version: 1
projects:
  - slug: shop
    name: Shop
    environments:
      - slug: production
        require_approval: true
        segments:
          - {key: staff, name: Staff, rules: [{attribute: email, operator: ends_with, values: ["@acme.com"]}]}
        flags:
          - {key: checkout-v2, is_enabled: true, prerequisites: [{flag_key: payments}], rules: [{segment_key: staff}]}
          - {key: payments, is_enabled: true, rollout_percentage: %d}
      - slug: staging
        flags:
          - {key: payments, is_enabled: true, rollout_percentage: %d}
`

// apply creates a project from a file in dependency order, leaves the
// fields the file does not name alone, opens change requests where
// approval is required (exit 3) until they are approved, prunes only when
// asked, refuses up front what the server would refuse, and writes nothing
// the second time.
func TestCLIApply(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	_, approver := s.User(t, "second@example.com", "admin")
	run := func(env map[string]string, args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, s, token, env, args...)
	}
	v1 := writeFile(t, "v1.yaml", fmt.Sprintf(shopFile, 10, 10))

	code, out, errOut := run(nil, "diff", "-f", v1)
	for _, want := range []string{"+ project shop", "+ segment shop/production/staff", "+ flag shop/production/payments",
		"~ environment shop/production\n    require_approval: false → true", "Plan: 5 to create, 1 to change, 0 to delete."} {
		if !strings.Contains(out, want) {
			t.Errorf("diff misses %q:\n%s%s", want, out, errOut)
		}
	}
	if code != cli.ExitChanges {
		t.Errorf("diff with changes = %d, want %d", code, cli.ExitChanges)
	}
	// Asked, and not answered yes: nothing is written.
	if code, _, errOut := run(map[string]string{"STDIN": "no\n"}, "apply", "-f", v1); code != cli.ExitError || !strings.Contains(errOut, "not applied") {
		t.Errorf("apply answered no = %d %q", code, errOut)
	}
	if code, out, _ := run(nil, "projects", "list"); code != cli.ExitOK || strings.Contains(out, "shop") {
		t.Fatalf("a refused apply wrote:\n%s", out)
	}
	code, out, errOut = run(map[string]string{"STDIN": "yes\n"}, "apply", "-f", v1)
	if code != cli.ExitOK || !strings.Contains(out, "create flag: flag shop/production/checkout-v2") {
		t.Fatalf("apply = %d\n%s%s", code, out, errOut)
	}
	// The prerequisite was created before the flag that names it.
	if i, j := strings.Index(out, "create flag: flag shop/production/payments"), strings.Index(out, "create flag: flag shop/production/checkout-v2"); i < 0 || i > j {
		t.Errorf("payments after checkout-v2:\n%s", out)
	}
	envs := map[string]string{}
	var projects []struct {
		Slug         string
		Environments []struct {
			ID              string `json:"id"`
			Slug            string
			RequireApproval bool `json:"require_approval"`
		}
	}
	if err := json.Unmarshal([]byte(mustRunCLI(t, s, token, "projects", "list", "-o", "json")), &projects); err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		for _, e := range p.Environments {
			if p.Slug == "shop" {
				envs[e.Slug] = e.ID
				if e.Slug == "production" && !e.RequireApproval {
					t.Error("production does not require approval")
				}
			}
		}
	}
	prod, staging := envs["production"], envs["staging"]
	if prod == "" || staging == "" || envs["development"] == "" {
		t.Fatalf("shop's environments: %v", envs)
	}
	before := versions(t, s, token, prod)
	if code, out, _ := run(nil, "apply", "-f", v1, "--yes"); code != cli.ExitOK || !strings.Contains(out, "No changes") {
		t.Errorf("second apply = %d\n%s", code, out)
	}
	if after := versions(t, s, token, prod); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the second apply wrote: %v, then %v", before, after)
	}

	// A field the file does not name stays as people set it.
	mustRunCLI(t, s, token, "flags", "update", "payments", "--project", "shop", "--env", "staging", "--patch", "{description: set by people}")
	v2 := writeFile(t, "v2.yaml", fmt.Sprintf(shopFile, 20, 50))
	code, out, errOut = run(nil, "apply", "-f", v2, "--yes")
	if code != cli.ExitPending || !regexp.MustCompile(`change request \d+ opened: flag shop/production/payments`).MatchString(out) {
		t.Fatalf("apply into an approval environment = %d\n%s%s", code, out, errOut)
	}
	flag := mustRunCLI(t, s, token, "flags", "get", "payments", "--project", "shop", "--env", "staging", "-o", "json")
	if !strings.Contains(flag, `"rollout_percentage": 50`) || !strings.Contains(flag, "set by people") {
		t.Errorf("staging payments:\n%s", flag)
	}
	// Until it is approved the same apply opens no second request.
	code, out, _ = run(nil, "apply", "-f", v2, "--yes")
	m := regexp.MustCompile(`change request (\d+) \(already pending\)`).FindStringSubmatch(out)
	if code != cli.ExitPending || m == nil {
		t.Fatalf("apply with the request pending = %d\n%s", code, out)
	}
	if crs := mustRunCLI(t, s, token, "change-requests", "list", "--project", "shop", "--env", "production", "--status", "pending", "-o", "json"); strings.Count(crs, `"flag_key"`) != 1 {
		t.Errorf("pending change requests:\n%s", crs)
	}
	mustRunCLI(t, s, approver, "change-requests", "approve", m[1], "--project", "shop", "--env", "production")
	if code, out, errOut := run(nil, "apply", "-f", v2, "--yes"); code != cli.ExitOK || !strings.Contains(out, "No changes") {
		t.Errorf("apply once approved = %d\n%s%s", code, out, errOut)
	}

	// What the server would refuse is refused before anything is written.
	refused := writeFile(t, "refused.yaml", strings.Replace(fmt.Sprintf(shopFile, 20, 60), "name: Staff", "name: Staff people", 1))
	if code, _, errOut := run(nil, "apply", "-f", refused, "--yes"); code != cli.ExitError || !strings.Contains(errOut, "segment shop/production/staff") {
		t.Errorf("a segment write under approval = %d %q", code, errOut)
	}
	if flag := mustRunCLI(t, s, token, "flags", "get", "payments", "--project", "shop", "--env", "staging", "-o", "json"); !strings.Contains(flag, `"rollout_percentage": 50`) {
		t.Errorf("a refused apply wrote:\n%s", flag)
	}

	// Prune deletes only with --prune, and only in the environments named.
	pruned := writeFile(t, "pruned.yaml", "version: 1\nprojects:\n  - slug: shop\n    environments:\n      - slug: staging\n        flags: []\n")
	if code, out, _ := run(nil, "diff", "-f", pruned); code != cli.ExitOK {
		t.Errorf("diff without --prune = %d\n%s", code, out)
	}
	if code, out, _ := run(nil, "diff", "-f", pruned, "--prune"); code != cli.ExitChanges || !strings.Contains(out, "- flag shop/staging/payments") || strings.Contains(out, "production") {
		t.Errorf("diff --prune = %d\n%s", code, out)
	}
	mustRunCLI(t, s, token, "apply", "-f", pruned, "--prune", "--yes")
	if got := versions(t, s, token, staging); len(got) != 0 {
		t.Errorf("staging after prune: %v", got)
	}
	if got := versions(t, s, token, prod); len(got) != 2 {
		t.Errorf("production after a prune of staging: %v", got)
	}
}

// Two applies of one file at once both succeed, and leave the server as
// the file says.
func TestCLIApplyConcurrent(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	text := `version: 1
projects:
  - slug: twin
    environments:
      - slug: production
        segments: [{key: staff, rules: [{attribute: email, operator: ends_with, values: ["@acme.com"]}]}]
        flags:
          - {key: a, is_enabled: true, rules: [{segment_key: staff}]}
          - {key: b, rollout_percentage: 30, prerequisites: [{flag_key: a}]}
      - slug: qa
        color: "#123456"
        flags: [{key: a, is_enabled: true}]
`
	file := writeFile(t, "twin.yaml", text)
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errOut := runCLI(t, s, token, nil, "apply", "-f", file, "--yes")
			results[i] = fmt.Sprintf("%d\n%s%s", code, out, errOut)
		}()
	}
	wg.Wait()
	for _, r := range results {
		if !strings.HasPrefix(r, "0\n") {
			t.Errorf("a concurrent apply failed: %s", r)
		}
	}
	if code, out, errOut := runCLI(t, s, token, nil, "diff", "-f", file); code != cli.ExitOK {
		t.Errorf("after both: diff = %d\n%s%s", code, out, errOut)
	}
}

// validate finds a file's mistakes without a server, at their lines; schema
// prints the file's JSON Schema.
func TestCLIValidateAndSchema(t *testing.T) {
	t.Parallel()
	noServer := map[string]string{"SWITCHYARD_URL": "http://127.0.0.1:1"}
	raw, err := os.ReadFile("../../cli/flagfile/testdata/mistakes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "mistakes.yaml", string(raw))
	var out, errOut string
	code := func() int {
		var c int
		c, out, errOut = runCLI(t, &apptest.Server{}, "", noServer, "validate", "-f", file)
		return c
	}()
	if code != cli.ExitError || strings.Count(errOut, file+":") < 12 || !strings.Contains(errOut, file+":14: checkout.production.flags.new-checkout.rollout_precentage: unknown field") {
		t.Errorf("validate = %d\n%s%s", code, out, errOut)
	}
	good := writeFile(t, "good.yaml", fmt.Sprintf(shopFile, 1, 2))
	if code, out, errOut := runCLI(t, &apptest.Server{}, "", noServer, "validate", "-f", good); code != cli.ExitOK || !strings.Contains(out, "is valid") {
		t.Errorf("validate of a good file = %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, &apptest.Server{}, "", noServer, "validate"); code != cli.ExitUsage || !strings.Contains(errOut, "-f") {
		t.Errorf("validate without -f = %d %q", code, errOut)
	}
	code, out, _ = runCLI(t, &apptest.Server{}, "", noServer, "schema")
	var schema struct {
		Defs map[string]any `json:"$defs"`
	}
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &schema) != nil || schema.Defs["Flag"] == nil || schema.Defs["TargetingRule"] == nil {
		t.Errorf("schema = %d\n%.300s", code, out)
	}
}
