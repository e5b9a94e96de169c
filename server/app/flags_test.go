package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// flagEnv is a running server with an admin token and the Default
// project's environments.
type flagEnv struct {
	s       *apptest.Server
	token   string
	project string
	envs    map[string]string
}

func newFlagEnv(t *testing.T) *flagEnv {
	t.Helper()
	s := apptest.Start(t, nil)
	_, token := s.User(t, "admin@example.com", "admin")
	project, envs := s.DefaultProject(t)
	fe := &flagEnv{s: s, token: token, project: project.String(), envs: map[string]string{}}
	for slug, id := range envs {
		fe.envs[slug] = id.String()
	}
	return fe
}

// call sends a request as the admin (or with bearer when given) and decodes
// the JSON answer into a generic value.
func (fe *flagEnv) call(t *testing.T, method, path string, body any, bearer ...string) (int, any) {
	t.Helper()
	tok := fe.token
	if len(bearer) > 0 {
		tok = bearer[0]
	}
	status, raw, _ := fe.s.Do(t, apptest.Request{Method: method, Path: path, Bearer: tok, Body: body})
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: body %q is not JSON", method, path, raw)
		}
	}
	return status, v
}

func (fe *flagEnv) flags(env string) string { return "/api/environments/" + fe.envs[env] + "/flags" }

func field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func detailsName(v any, want string) bool {
	ds, _ := field(v, "details").([]any)
	for _, d := range ds {
		if field(d, "field") == want {
			return true
		}
	}
	return false
}

func TestFlagLifecycle(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	base := fe.flags("production")

	status, f := fe.call(t, "POST", base, map[string]any{
		"key": "new-checkout", "is_enabled": true, "rollout_percentage": 25, "description": "the new flow",
		"tags": []string{"checkout"}, "owner_email": "ada@example.com",
	})
	if status != 200 {
		t.Fatalf("create = %d %v", status, f)
	}
	want := map[string]any{
		"key": "new-checkout", "environment_id": fe.envs["production"], "is_enabled": true,
		"rollout_percentage": float64(25), "description": "the new flow", "flag_type": "boolean",
		"rules": []any{}, "variants": []any{}, "prerequisites": []any{}, "tags": []any{"checkout"},
		"owner_email": "ada@example.com", "archived_at": nil, "default_value": nil, "disabled_value": nil,
		"version": float64(1),
	}
	for k, v := range want {
		if d := cmp.Diff(v, field(f, k)); d != "" {
			t.Errorf("created %s (-want +got): %s", k, d)
		}
	}

	// PATCH is a merge patch: omitted fields keep their values, null clears.
	status, f = fe.call(t, "PATCH", base+"/new-checkout", map[string]any{"rollout_percentage": nil, "description": nil, "is_enabled": false})
	if status != 200 || field(f, "rollout_percentage") != nil || field(f, "description") != nil ||
		field(f, "is_enabled") != false || field(f, "version") != float64(2) || field(f, "owner_email") != "ada@example.com" {
		t.Fatalf("patch = %d %v", status, f)
	}
	// POST with an existing key replaces the whole configuration.
	status, f = fe.call(t, "POST", base, map[string]any{"key": "new-checkout", "is_enabled": true})
	if status != 200 || field(f, "version") != float64(3) || field(f, "owner_email") != nil || len(field(f, "tags").([]any)) != 0 {
		t.Fatalf("replace = %d %v", status, f)
	}
	if status, f = fe.call(t, "GET", base+"/new-checkout", nil); status != 200 || field(f, "version") != float64(3) {
		t.Fatalf("get = %d %v", status, f)
	}
	if status, _ := fe.call(t, "PATCH", base+"/new-checkout", map[string]any{"key": "renamed"}); status != 422 {
		t.Errorf("patching the key = %d, want 422", status)
	}
	// Archive and unarchive are writes.
	if status, f = fe.call(t, "POST", base+"/new-checkout/archive", nil); status != 200 || field(f, "archived_at") == nil || field(f, "version") != float64(4) {
		t.Fatalf("archive = %d %v", status, f)
	}
	for _, c := range []struct {
		query string
		n     int
	}{{"", 1}, {"?archived=true", 1}, {"?archived=false", 0}} {
		if status, list := fe.call(t, "GET", base+c.query, nil); status != 200 || len(list.([]any)) != c.n {
			t.Errorf("list%s = %d %v, want %d flags", c.query, status, list, c.n)
		}
	}
	if status, f = fe.call(t, "POST", base+"/new-checkout/unarchive", nil); status != 200 || field(f, "archived_at") != nil || field(f, "version") != float64(5) {
		t.Fatalf("unarchive = %d %v", status, f)
	}
	if status, _ := fe.call(t, "DELETE", base+"/new-checkout", nil); status != 204 {
		t.Fatalf("delete = %d", status)
	}
	if status, _ := fe.call(t, "GET", base+"/new-checkout", nil); status != 404 {
		t.Errorf("get after delete = %d, want 404", status)
	}
	if status, _ := fe.call(t, "DELETE", base+"/new-checkout", nil); status != 404 {
		t.Errorf("second delete = %d, want 404", status)
	}

	// Every write left an audit entry, newest first.
	status, entries := fe.call(t, "GET", "/api/environments/"+fe.envs["production"]+"/audit", nil)
	if status != 200 {
		t.Fatalf("audit = %d %v", status, entries)
	}
	var actions []string
	for _, e := range entries.([]any) {
		actions = append(actions, field(e, "action").(string))
		if field(e, "actor_email") != "admin@example.com" || field(e, "metadata", "source") != "api" {
			t.Errorf("audit entry %v lacks actor or source", e)
		}
	}
	if d := cmp.Diff([]string{"delete", "unarchive", "archive", "replace", "update", "create"}, actions); d != "" {
		t.Errorf("audit actions (-want +got):\n%s", d)
	}
	last := entries.([]any)[len(entries.([]any))-1]
	if field(last, "before_data") != nil || field(last, "after_data", "key") != "new-checkout" {
		t.Errorf("create entry = %v, want no before_data and the flag as after_data", last)
	}
}

func TestFlagValidation(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	base := fe.flags("production")
	fe.call(t, "POST", base, map[string]any{"key": "color", "is_enabled": true, "flag_type": "string", "default_value": "red"})
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"string flag with a number default", map[string]any{"key": "f", "is_enabled": true, "flag_type": "string", "default_value": 3}, "default_value"},
		{"integer flag with a fraction", map[string]any{"key": "f", "is_enabled": true, "flag_type": "integer", "disabled_value": 1.5}, "disabled_value"},
		{"boolean flag with a string default", map[string]any{"key": "f", "is_enabled": true, "default_value": "yes"}, "default_value"},
		{"variant of the wrong type", map[string]any{"key": "f", "is_enabled": true, "flag_type": "string", "variants": []any{map[string]any{"weight": 1, "value": true}}}, "variants.0.value"},
		{"rule variant of the wrong type", map[string]any{"key": "f", "is_enabled": true, "flag_type": "integer", "rules": []any{map[string]any{"attribute": "a", "operator": "equals", "values": []string{"x"}, "variant": "x"}}}, "rules.0.variant"},
		{"rule without values", map[string]any{"key": "f", "is_enabled": true, "rules": []any{map[string]any{"attribute": "a", "operator": "equals", "values": []string{}}}}, "rules.0.values"},
		{"rule without attribute", map[string]any{"key": "f", "is_enabled": true, "rules": []any{map[string]any{"operator": "equals", "values": []string{"x"}}}}, "rules.0.attribute"},
		{"unknown segment", map[string]any{"key": "f", "is_enabled": true, "rules": []any{map[string]any{"segment_key": "beta"}}}, "rules.0.segment_key"},
		{"own prerequisite", map[string]any{"key": "f", "is_enabled": true, "prerequisites": []any{map[string]any{"flag_key": "f"}}}, "prerequisites.0.flag_key"},
		{"required value of the prerequisite's type", map[string]any{"key": "f", "is_enabled": true, "prerequisites": []any{map[string]any{"flag_key": "color", "required_value": 7}}}, "prerequisites.0.required_value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := fe.call(t, "POST", base, c.body)
			if status != 422 || !detailsName(body, c.field) {
				t.Errorf("= %d %v, want 422 naming %s", status, body, c.field)
			}
		})
	}
	// A patch is validated against the flag it produces.
	status, body := fe.call(t, "PATCH", base+"/color", map[string]any{"flag_type": "integer"})
	if status != 422 || !detailsName(body, "default_value") {
		t.Errorf("patching the type away from the values = %d %v, want 422 naming default_value", status, body)
	}
	// A missing prerequisite flag is allowed: it is simply unsatisfied.
	if status, body := fe.call(t, "POST", base, map[string]any{"key": "g", "is_enabled": true, "prerequisites": []any{map[string]any{"flag_key": "not-yet"}}}); status != 200 {
		t.Errorf("prerequisite on a missing flag = %d %v, want 200", status, body)
	}
	if status, _ := fe.call(t, "PATCH", base+"/nope", map[string]any{"is_enabled": true}); status != 404 {
		t.Errorf("patching a missing flag = %d, want 404", status)
	}
}

func TestPromoteAndDiff(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	fe.call(t, "POST", fe.flags("staging"), map[string]any{"key": "a", "is_enabled": true, "rollout_percentage": 10})
	fe.call(t, "POST", fe.flags("staging"), map[string]any{"key": "b", "is_enabled": true})
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "b", "is_enabled": false})
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "c", "is_enabled": true})

	diffURL := fmt.Sprintf("/api/projects/%s/flags/diff?from=%s&to=%s", fe.project, fe.envs["staging"], fe.envs["production"])
	status, diff := fe.call(t, "GET", diffURL, nil)
	if status != 200 {
		t.Fatalf("diff = %d %v", status, diff)
	}
	type row struct {
		Key, Status string
		Changed     []any
	}
	var got []row
	for _, e := range diff.([]any) {
		got = append(got, row{field(e, "key").(string), field(e, "status").(string), field(e, "changed_fields").([]any)})
	}
	want := []row{{"a", "only_in_from", []any{}}, {"b", "different", []any{"is_enabled"}}, {"c", "only_in_to", []any{}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("diff (-want +got):\n%s", d)
	}

	status, f := fe.call(t, "POST", fe.flags("staging")+"/b/promote", map[string]any{"target_env_id": fe.envs["production"]})
	if status != 200 || field(f, "environment_id") != fe.envs["production"] || field(f, "is_enabled") != true || field(f, "version") != float64(2) {
		t.Fatalf("promote = %d %v", status, f)
	}
	status, diff = fe.call(t, "GET", diffURL, nil)
	if status != 200 || field(diff.([]any)[1], "status") != "same" {
		t.Errorf("after promotion b is %v, want same", diff.([]any)[1])
	}
	_, entries := fe.call(t, "GET", "/api/environments/"+fe.envs["production"]+"/audit?flag_key=b&limit=1", nil)
	if e := entries.([]any)[0]; field(e, "action") != "promote" || field(e, "metadata", "source_environment_id") != fe.envs["staging"] {
		t.Errorf("promote audit entry = %v", e)
	}
	if status, _ := fe.call(t, "POST", fe.flags("staging")+"/b/promote", map[string]any{"target_env_id": fe.envs["staging"]}); status != 422 {
		t.Errorf("promote into its own environment = %d, want 422", status)
	}
	if status, _ := fe.call(t, "POST", fe.flags("staging")+"/zzz/promote", map[string]any{"target_env_id": fe.envs["production"]}); status != 404 {
		t.Errorf("promote a missing flag = %d, want 404", status)
	}
	// A flag whose rules reference a segment promotes only where that segment exists.
	fe.call(t, "POST", "/api/environments/"+fe.envs["staging"]+"/segments", map[string]any{"key": "beta", "name": "Beta"})
	fe.call(t, "POST", fe.flags("staging"), map[string]any{"key": "d", "is_enabled": true, "rules": []any{map[string]any{"segment_key": "beta"}}})
	if status, body := fe.call(t, "POST", fe.flags("staging")+"/d/promote", map[string]any{"target_env_id": fe.envs["production"]}); status != 422 || !detailsName(body, "rules.0.segment_key") {
		t.Errorf("promote with a segment missing in the target = %d %v, want 422", status, body)
	}
}

func TestApprovalRequiredEnvironment(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	base := fe.flags("production")
	fe.call(t, "POST", base, map[string]any{"key": "gate", "is_enabled": false})
	fe.call(t, "POST", fe.flags("staging"), map[string]any{"key": "gate", "is_enabled": true})
	fe.call(t, "POST", "/api/environments/"+fe.envs["production"]+"/segments", map[string]any{"key": "beta", "name": "Beta"})
	if _, err := fe.s.DB(t).Exec(t.Context(), `UPDATE environments SET require_approval = true WHERE id = $1`, fe.envs["production"]); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, path string
		body               any
		want               int
	}{
		{"replace", "POST", base, map[string]any{"key": "gate", "is_enabled": true}, 409},
		{"create a new flag", "POST", base, map[string]any{"key": "fresh", "is_enabled": true}, 200},
		{"delete", "DELETE", base + "/gate", nil, 409},
		{"promote into it", "POST", fe.flags("staging") + "/gate/promote", map[string]any{"target_env_id": fe.envs["production"]}, 409},
		{"create a segment", "POST", "/api/environments/" + fe.envs["production"] + "/segments", map[string]any{"key": "s2", "name": "S"}, 409},
		{"patch a segment", "PATCH", "/api/environments/" + fe.envs["production"] + "/segments/beta", map[string]any{"name": "B"}, 409},
		{"delete a segment", "DELETE", "/api/environments/" + fe.envs["production"] + "/segments/beta", nil, 409},
		{"invalid patch is still rejected", "PATCH", base + "/gate", map[string]any{"rollout_percentage": 200}, 422},
	}
	for _, c := range cases {
		if status, body := fe.call(t, c.method, c.path, c.body); status != c.want {
			t.Errorf("%s = %d %v, want %d", c.name, status, body, c.want)
		}
	}
	// PATCH queues a change request (202) and leaves the flag unchanged.
	status, cr := fe.call(t, "PATCH", base+"/gate", map[string]any{"is_enabled": true})
	if status != 202 || field(cr, "status") != "pending" || field(cr, "requested_by") != "admin@example.com" || field(cr, "patch", "is_enabled") != true {
		t.Fatalf("patch under approval = %d %v, want 202 with a pending change request", status, cr)
	}
	if _, f := fe.call(t, "GET", base+"/gate", nil); field(f, "is_enabled") != false || field(f, "version") != float64(1) {
		t.Errorf("the flag changed under approval: %v", f)
	}
}

func TestFlagAccessByRole(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	project, envs := fe.s.DefaultProject(t)
	viewerID, viewer := fe.s.User(t, "viewer@example.com", "viewer")
	fe.s.Member(t, project, viewerID, "viewer")
	editorID, editor := fe.s.User(t, "editor@example.com", "editor")
	fe.s.Member(t, project, editorID, "editor")
	readOnly := fe.s.Token(t, editorID, "read_only", nil)
	_, outsider := fe.s.User(t, "outsider@example.com", "editor")
	sdkKey := fe.s.SDKKey(t, envs["production"])
	base := fe.flags("production")
	fe.call(t, "POST", base, map[string]any{"key": "f", "is_enabled": true})

	cases := []struct {
		name             string
		token            string
		read, write, del int
	}{
		{"viewer", viewer, 200, 403, 403},
		{"editor", editor, 200, 200, 204},
		{"read_only token of an editor", readOnly, 200, 403, 403},
		{"not a member", outsider, 404, 404, 404},
		{"SDK key of the environment", sdkKey, 200, 200, 204},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := strings.ReplaceAll(c.name, " ", "-")
			fe.call(t, "POST", base, map[string]any{"key": key, "is_enabled": true})
			if status, _ := fe.call(t, "GET", base+"/f", nil, c.token); status != c.read {
				t.Errorf("read = %d, want %d", status, c.read)
			}
			if status, _ := fe.call(t, "PATCH", base+"/"+key, map[string]any{"is_enabled": false}, c.token); status != c.write {
				t.Errorf("write = %d, want %d", status, c.write)
			}
			if status, _ := fe.call(t, "DELETE", base+"/"+key, nil, c.token); status != c.del {
				t.Errorf("delete = %d, want %d", status, c.del)
			}
		})
	}
	// An SDK key is confined to its environment.
	if status, _ := fe.call(t, "GET", fe.flags("staging"), nil, sdkKey); status != 404 {
		t.Errorf("SDK key on another environment = %d, want 404", status)
	}
	_, entries := fe.call(t, "GET", "/api/environments/"+fe.envs["production"]+"/audit?flag_key=SDK-key-of-the-environment", nil)
	if e := entries.([]any)[0]; !strings.HasPrefix(field(e, "actor_email").(string), "sdk:sk_live_") {
		t.Errorf("SDK key audit actor = %v, want sdk:<prefix>", field(e, "actor_email"))
	}
}

func TestSegmentsAndExpansion(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	segs := "/api/environments/" + fe.envs["production"] + "/segments"
	status, seg := fe.call(t, "POST", segs, map[string]any{"key": "beta", "name": "Beta users", "description": "opt-in",
		"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"pro"}}}})
	if status != 200 || field(seg, "key") != "beta" || field(seg, "description") != "opt-in" {
		t.Fatalf("create segment = %d %v", status, seg)
	}
	if status, _ := fe.call(t, "POST", segs, map[string]any{"key": "beta", "name": "again"}); status != 409 {
		t.Errorf("duplicate segment key = %d, want 409", status)
	}
	if status, body := fe.call(t, "POST", segs, map[string]any{"key": "nested", "name": "N", "rules": []any{map[string]any{"segment_key": "beta"}}}); status != 422 {
		t.Errorf("segment referencing a segment = %d %v, want 422", status, body)
	}
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "ui", "is_enabled": true, "flag_type": "string", "default_value": "old",
		"rules": []any{map[string]any{"segment_key": "beta", "variant": "new"}}})

	// Editing the segment re-versions the referencing flag (SDKs ignore
	// updates that are not newer).
	status, seg = fe.call(t, "PATCH", segs+"/beta", map[string]any{"description": nil,
		"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"pro", "team"}}}})
	if status != 200 || field(seg, "description") != nil || field(seg, "name") != "Beta users" || len(field(seg, "rules").([]any)[0].(map[string]any)["values"].([]any)) != 2 {
		t.Fatalf("patch segment = %d %v", status, seg)
	}
	if _, f := fe.call(t, "GET", fe.flags("production")+"/ui", nil); field(f, "version") != float64(2) {
		t.Errorf("referencing flag after a segment edit: version %v, want 2", field(f, "version"))
	}
	if status, _ := fe.call(t, "DELETE", segs+"/beta", nil); status != 204 {
		t.Fatalf("delete segment = %d", status)
	}
	if _, f := fe.call(t, "GET", fe.flags("production")+"/ui", nil); field(f, "version") != float64(3) {
		t.Errorf("referencing flag after the segment's deletion: version %v, want 3", field(f, "version"))
	}
	if status, _ := fe.call(t, "GET", segs+"/beta", nil); status != 404 {
		t.Errorf("deleted segment = %d, want 404", status)
	}
}

func TestAuditListing(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	for i := 0; i < 3; i++ {
		fe.call(t, "POST", fe.flags("production"), map[string]any{"key": fmt.Sprintf("f%d", i), "is_enabled": true})
	}
	audit := "/api/environments/" + fe.envs["production"] + "/audit"
	cases := []struct {
		query string
		keys  []string
	}{
		{"", []string{"f2", "f1", "f0"}},
		{"?limit=2", []string{"f2", "f1"}},
		{"?limit=2&offset=2", []string{"f0"}},
		{"?limit=0", []string{"f2"}}, // clamped to 1
		{"?limit=100000", []string{"f2", "f1", "f0"}},
		{"?offset=-5", []string{"f2", "f1", "f0"}},
		{"?flag_key=f1", []string{"f1"}},
	}
	for _, c := range cases {
		status, entries := fe.call(t, "GET", audit+c.query, nil)
		var keys []string
		for _, e := range entries.([]any) {
			keys = append(keys, field(e, "flag_key").(string))
		}
		if status != http.StatusOK || !cmp.Equal(c.keys, keys) {
			t.Errorf("audit%s = %d %v, want %v", c.query, status, keys, c.keys)
		}
	}
}

// POST of one new key from many clients at once creates it once and
// replaces it after: every request succeeds (none meets the unique key as
// a conflict), and the flag ends at one version per request.
func TestPutFlagConcurrentCreate(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	const n = 8
	statuses := make(chan int, n)
	for i := 0; i < n; i++ {
		go func() {
			status, body, _ := fe.s.Do(t, apptest.Request{Method: "POST", Path: fe.flags("production"), Bearer: fe.token,
				Body: map[string]any{"key": "raced", "is_enabled": true}})
			if status != http.StatusOK {
				t.Logf("%d %s", status, body)
			}
			statuses <- status
		}()
	}
	for i := 0; i < n; i++ {
		if status := <-statuses; status != http.StatusOK {
			t.Errorf("a concurrent create answered %d", status)
		}
	}
	if status, flag := fe.call(t, "GET", fe.flags("production")+"/raced", nil); status != http.StatusOK || field(flag, "version") != float64(n) {
		t.Errorf("after %d creates: %d %v", n, status, flag)
	}
}
