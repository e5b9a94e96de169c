package app_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// These tests drive the guarded-release routes only: every instance runs
// without the release guard, so no check ever changes a release behind
// the test's back (docs/releases.md).

// newReleaseAPIEnv starts an instance without the scheduler and the release
// guard, with fast notification delivery.
func newReleaseAPIEnv(t *testing.T, opts ...app.Option) *flagEnv {
	t.Helper()
	return newGovEnv(t, append([]app.Option{app.WithoutScheduler()}, opts...)...)
}

// releaseInput is a valid release: three stages and one guardrail metric.
func releaseInput() map[string]any {
	return map[string]any{
		"stages": []any{
			map[string]any{"percentage": 5, "duration_seconds": 3600},
			map[string]any{"percentage": 50, "duration_seconds": 3600},
			map[string]any{"percentage": 100, "duration_seconds": 3600},
		},
		"metrics": []any{
			map[string]any{"event_key": "checkout_error", "kind": "mean", "bad_direction": "increase", "tolerance": 0.02},
		},
	}
}

func (fe *flagEnv) releasesPath(env string) string { return fe.env(env) + "/releases" }

// createFlag creates a flag in production and fails the test unless it is created.
func (fe *flagEnv) createFlag(t *testing.T, body map[string]any) {
	t.Helper()
	if status, f := fe.call(t, "POST", fe.flags("production"), body); status != 200 && status != 201 {
		t.Fatalf("create flag %v = %d %v", body["key"], status, f)
	}
}

// startRelease starts releaseInput on a production flag and returns the
// release.
func (fe *flagEnv) startRelease(t *testing.T, key string) map[string]any {
	t.Helper()
	status, r := fe.call(t, "POST", fe.flags("production")+"/"+key+"/releases", releaseInput())
	if status != 201 {
		t.Fatalf("start release of %s = %d %v", key, status, r)
	}
	return r.(map[string]any)
}

// getFlag returns a production flag.
func (fe *flagEnv) getFlag(t *testing.T, key string) map[string]any {
	t.Helper()
	status, f := fe.call(t, "GET", fe.flags("production")+"/"+key, nil)
	if status != 200 {
		t.Fatalf("get flag %s = %d %v", key, status, f)
	}
	return f.(map[string]any)
}

// flagAudit returns a production flag's audit entries, newest first.
func (fe *flagEnv) flagAudit(t *testing.T, key string) []any {
	t.Helper()
	status, entries := fe.call(t, "GET", fe.env("production")+"/audit?flag_key="+key, nil)
	if status != 200 {
		t.Fatalf("audit of %s = %d %v", key, status, entries)
	}
	return entries.([]any)
}

// auditActions lists the actions of entries, oldest first.
func auditActions(entries []any) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[len(entries)-1-i] = field(e, "action").(string)
	}
	return out
}

func TestReleaseCreate(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	fe.createFlag(t, map[string]any{"key": "checkout", "is_enabled": true, "rollout_percentage": 30})
	fe.createFlag(t, map[string]any{"key": "search", "is_enabled": true})
	before := fe.getFlag(t, "checkout")

	in := releaseInput()
	in["alpha"], in["min_users"], in["check_interval_seconds"] = 0.1, 250, 30
	status, got := fe.call(t, "POST", fe.flags("production")+"/checkout/releases", in)
	if status != 201 {
		t.Fatalf("create = %d %v, want 201", status, got)
	}
	rel := got.(map[string]any)
	id := rel["id"].(string)
	var me struct {
		ID float64 `json:"id"`
	}
	_, raw, _ := fe.s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Bearer: fe.token})
	if err := json.Unmarshal(raw, &me); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"environment_id": fe.envs["production"], "flag_key": "checkout", "status": "running",
		"stages": in["stages"], "stage_index": float64(0), "metrics": in["metrics"],
		"alpha": 0.1, "min_users": float64(250), "check_interval_seconds": float64(30),
		"previous_rollout_percentage": float64(30), "reason": nil, "created_by": me.ID,
		"ended_at": nil, "analysis": nil,
	}
	for k, v := range want {
		if d := cmp.Diff(jsonRound(t, v), rel[k]); d != "" {
			t.Errorf("release %s (-want +got):\n%s", k, d)
		}
	}
	if rel["started_at"] != rel["stage_started_at"] {
		t.Errorf("started_at %v, stage_started_at %v: the first stage starts with the release", rel["started_at"], rel["stage_started_at"])
	}

	// The flag's rollout becomes the first stage's, through the write path.
	after := fe.getFlag(t, "checkout")
	if after["rollout_percentage"] != float64(5) || after["version"] != before["version"].(float64)+1 {
		t.Errorf("flag after start: rollout %v version %v, want 5 and %v", after["rollout_percentage"], after["version"], before["version"].(float64)+1)
	}
	entries := fe.flagAudit(t, "checkout")
	if d := cmp.Diff([]string{"create", "update", "release.started"}, auditActions(entries)); d != "" {
		t.Fatalf("audit actions (-want +got):\n%s", d)
	}
	update, started := entries[1], entries[0]
	if field(update, "metadata", "source") != "release" || field(update, "metadata", "release_id") != id {
		t.Errorf("flag write's metadata = %v, want source release and release_id %s", field(update, "metadata"), id)
	}
	if field(update, "before_data", "rollout_percentage") != float64(30) || field(update, "after_data", "rollout_percentage") != float64(5) {
		t.Errorf("flag write = %v", update)
	}
	if field(started, "after_data", "id") != id || field(started, "metadata", "release_id") != id {
		t.Errorf("release.started entry = %v", started)
	}

	// Defaults, and a flag without a rollout percentage (everyone).
	rel = fe.startRelease(t, "search")
	if rel["alpha"] != 0.05 || rel["min_users"] != float64(100) || rel["check_interval_seconds"] != float64(60) {
		t.Errorf("defaults = alpha %v, min_users %v, interval %v", rel["alpha"], rel["min_users"], rel["check_interval_seconds"])
	}
	if v, ok := rel["previous_rollout_percentage"]; !ok || v != nil {
		t.Errorf("previous_rollout_percentage = %v (present %v), want null", v, ok)
	}
	if got := fe.getFlag(t, "search")["rollout_percentage"]; got != float64(5) {
		t.Errorf("search rollout = %v, want 5", got)
	}
}

// jsonRound is v as it reads back from JSON, for comparing with decoded
// bodies.
func jsonRound(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReleaseValidation(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	fe.createFlag(t, map[string]any{"key": "checkout", "is_enabled": true, "rollout_percentage": 30})
	stage := func(pct, secs int) map[string]any { return map[string]any{"percentage": pct, "duration_seconds": secs} }
	metric := func(key string) map[string]any {
		return map[string]any{"event_key": key, "kind": "conversion", "bad_direction": "decrease", "tolerance": 0.05}
	}
	many := func(n int, f func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	cases := []struct {
		name  string
		edit  func(in map[string]any)
		field string // a details entry's field contains this
	}{
		{"no stages", func(in map[string]any) { in["stages"] = []any{} }, "stages"},
		{"11 stages", func(in map[string]any) { in["stages"] = many(11, func(i int) any { return stage(i+1, 60) }) }, "stages"},
		{"percentage 0", func(in map[string]any) { in["stages"] = []any{stage(0, 60)} }, "percentage"},
		{"percentage 101", func(in map[string]any) { in["stages"] = []any{stage(101, 60)} }, "percentage"},
		{"percentage not increasing", func(in map[string]any) { in["stages"] = []any{stage(50, 60), stage(50, 60)} }, "percentage"},
		{"percentage decreasing", func(in map[string]any) { in["stages"] = []any{stage(50, 60), stage(20, 60)} }, "percentage"},
		{"duration 0", func(in map[string]any) { in["stages"] = []any{stage(10, 0)} }, "duration_seconds"},
		{"duration 2592001", func(in map[string]any) { in["stages"] = []any{stage(10, 2_592_001)} }, "duration_seconds"},
		{"no metrics", func(in map[string]any) { in["metrics"] = []any{} }, "metrics"},
		{"6 metrics", func(in map[string]any) {
			in["metrics"] = many(6, func(i int) any { return metric(fmt.Sprint("m", i)) })
		}, "metrics"},
		{"event_key twice", func(in map[string]any) { in["metrics"] = []any{metric("bought"), metric("bought")} }, "event_key"},
		{"bad event_key", func(in map[string]any) { in["metrics"] = []any{metric("bad key!")} }, "event_key"},
		{"empty event_key", func(in map[string]any) { in["metrics"] = []any{metric("")} }, "event_key"},
		{"unknown kind", func(in map[string]any) { m := metric("bought"); m["kind"] = "median"; in["metrics"] = []any{m} }, "kind"},
		{"unknown bad_direction", func(in map[string]any) { m := metric("bought"); m["bad_direction"] = "up"; in["metrics"] = []any{m} }, "bad_direction"},
		{"tolerance -1", func(in map[string]any) { m := metric("bought"); m["tolerance"] = -1; in["metrics"] = []any{m} }, "tolerance"},
		{"tolerance 11", func(in map[string]any) { m := metric("bought"); m["tolerance"] = 11; in["metrics"] = []any{m} }, "tolerance"},
		{"alpha 0", func(in map[string]any) { in["alpha"] = 0 }, "alpha"},
		{"alpha 0.6", func(in map[string]any) { in["alpha"] = 0.6 }, "alpha"},
		{"min_users 0", func(in map[string]any) { in["min_users"] = 0 }, "min_users"},
		{"check interval 0", func(in map[string]any) { in["check_interval_seconds"] = 0 }, "check_interval_seconds"},
		{"check interval 86401", func(in map[string]any) { in["check_interval_seconds"] = 86_401 }, "check_interval_seconds"},
		{"stages missing", func(in map[string]any) { delete(in, "stages") }, "stages"},
		{"metrics missing", func(in map[string]any) { delete(in, "metrics") }, "metrics"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := releaseInput()
			c.edit(in)
			status, body := fe.call(t, "POST", fe.flags("production")+"/checkout/releases", in)
			if status != 422 {
				t.Fatalf("status = %d %v, want 422", status, body)
			}
			ds, _ := field(body, "details").([]any)
			for _, d := range ds {
				if f, _ := field(d, "field").(string); strings.Contains(f, c.field) {
					return
				}
			}
			t.Errorf("details %v name no field with %q", ds, c.field)
		})
	}
	// Nothing started: no release, the flag untouched.
	if _, list := fe.call(t, "GET", fe.releasesPath("production"), nil); len(list.([]any)) != 0 {
		t.Errorf("releases after invalid input = %v", list)
	}
	if f := fe.getFlag(t, "checkout"); f["rollout_percentage"] != float64(30) || f["version"] != float64(1) {
		t.Errorf("flag after invalid input = %v", f)
	}
}

func TestReleaseNotFoundAndConflicts(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	fe.createFlag(t, map[string]any{"key": "checkout", "is_enabled": true})
	fe.createFlag(t, map[string]any{"key": "old", "is_enabled": true})
	fe.createFlag(t, map[string]any{"key": "color", "is_enabled": true, "flag_type": "string", "default_value": "red"})
	fe.createFlag(t, map[string]any{"key": "gated", "is_enabled": true})
	if status, body := fe.call(t, "POST", fe.flags("production")+"/old/archive", nil); status != 200 {
		t.Fatalf("archive = %d %v", status, body)
	}
	start := func(key string) (int, any) {
		return fe.call(t, "POST", fe.flags("production")+"/"+key+"/releases", releaseInput())
	}

	if status, body := start("nope"); status != 404 {
		t.Errorf("unknown flag = %d %v, want 404", status, body)
	}
	if status, body := start("old"); status != 409 {
		t.Errorf("archived flag = %d %v, want 409", status, body)
	}
	if status, body := start("color"); status != 409 {
		t.Errorf("string flag = %d %v, want 409", status, body)
	}
	rel := fe.startRelease(t, "checkout")
	id := rel["id"].(string)
	if status, body := start("checkout"); status != 409 {
		t.Errorf("second release while one runs = %d %v, want 409", status, body)
	}
	if status, body := fe.call(t, "POST", fe.releasesPath("production")+"/"+id+"/pause", nil); status != 200 {
		t.Fatalf("pause = %d %v", status, body)
	}
	if status, body := start("checkout"); status != 409 {
		t.Errorf("second release while one is paused = %d %v, want 409", status, body)
	}
	if f := fe.getFlag(t, "checkout"); f["version"] != float64(2) {
		t.Errorf("refused starts wrote the flag: version %v, want 2", f["version"])
	}

	// Another environment's release id, or an unknown one, is not found.
	other := fe.releasesPath("staging") + "/" + id
	for _, p := range []string{other, other + "/checks", fe.releasesPath("production") + "/" + someUUID, fe.releasesPath("production") + "/not-a-uuid"} {
		if status, body := fe.call(t, "GET", p, nil); status != 404 {
			t.Errorf("GET %s = %d %v, want 404", p, status, body)
		}
	}
	for _, action := range []string{"pause", "resume", "rollback", "cancel"} {
		if status, body := fe.call(t, "POST", other+"/"+action, nil); status != 404 {
			t.Errorf("%s through staging = %d %v, want 404", action, status, body)
		}
	}
	if status, _ := fe.call(t, "GET", fe.releasesPath("production")+"/"+id, nil); status != 200 {
		t.Errorf("GET through production = %d", status)
	}

	fe.requireApproval(t, "production", true)
	if status, body := start("gated"); status != 409 {
		t.Errorf("approval-required environment = %d %v, want 409", status, body)
	}
}

func TestReleaseListGetAndChecks(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	for _, key := range []string{"a", "b"} {
		fe.createFlag(t, map[string]any{"key": key, "is_enabled": true})
	}
	a1 := fe.startRelease(t, "a")["id"].(string)
	if status, body := fe.call(t, "POST", fe.releasesPath("production")+"/"+a1+"/cancel", nil); status != 200 {
		t.Fatalf("cancel = %d %v", status, body)
	}
	b1 := fe.startRelease(t, "b")["id"].(string)
	a2 := fe.startRelease(t, "a")["id"].(string)

	ids := func(query string) []string {
		t.Helper()
		status, list := fe.call(t, "GET", fe.releasesPath("production")+query, nil)
		if status != 200 {
			t.Fatalf("list %s = %d %v", query, status, list)
		}
		out := []string{}
		for _, r := range list.([]any) {
			out = append(out, field(r, "id").(string))
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{a2, b1, a1}},
		{"?status=running", []string{a2, b1}},
		{"?status=cancelled", []string{a1}},
		{"?status=paused", []string{}},
		{"?flag_key=a", []string{a2, a1}},
		{"?flag_key=b&status=running", []string{b1}},
		{"?flag_key=nope", []string{}},
	} {
		if d := cmp.Diff(c.want, ids(c.query)); d != "" {
			t.Errorf("list%s (-want +got):\n%s", c.query, d)
		}
	}
	if status, body := fe.call(t, "GET", fe.releasesPath("production")+"?status=finished", nil); status != 422 || !detailsName(body, "status") {
		t.Errorf("unknown status = %d %v, want 422 naming status", status, body)
	}
	_, list := fe.call(t, "GET", fe.releasesPath("production")+"?flag_key=b", nil)
	status, one := fe.call(t, "GET", fe.releasesPath("production")+"/"+b1, nil)
	if status != 200 {
		t.Fatalf("get = %d %v", status, one)
	}
	if d := cmp.Diff(list.([]any)[0], one); d != "" {
		t.Errorf("get differs from its list entry (-list +get):\n%s", d)
	}
	status, checks := fe.call(t, "GET", fe.releasesPath("production")+"/"+b1+"/checks", nil)
	if status != 200 || checks == nil || len(checks.([]any)) != 0 {
		t.Errorf("checks before any check = %d %v, want 200 []", status, checks)
	}
	if status, l := fe.call(t, "GET", fe.releasesPath("staging"), nil); status != 200 || len(l.([]any)) != 0 {
		t.Errorf("staging's releases = %d %v, want 200 []", status, l)
	}
}

func TestReleaseActions(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	fe := newReleaseAPIEnv(t, app.WithClock(clock.Now))
	fe.createFlag(t, map[string]any{"key": "checkout", "is_enabled": true, "rollout_percentage": 20})
	fe.createFlag(t, map[string]any{"key": "search", "is_enabled": true, "rollout_percentage": 20})
	rel := fe.startRelease(t, "checkout")
	base := fe.releasesPath("production") + "/" + rel["id"].(string)
	act := func(action string) (int, map[string]any) {
		t.Helper()
		status, body := fe.call(t, "POST", base+"/"+action, nil)
		m, _ := body.(map[string]any)
		return status, m
	}
	ts := func(v any) time.Time {
		t.Helper()
		at, err := time.Parse(time.RFC3339Nano, v.(string))
		if err != nil {
			t.Fatal(err)
		}
		return at
	}

	clock.Advance(10 * time.Minute)
	status, r := act("pause")
	if status != 200 || r["status"] != "paused" || r["reason"] != "paused by admin@example.com" || r["ended_at"] != nil {
		t.Fatalf("pause = %d %v", status, r)
	}
	if status, r := act("pause"); status != 409 {
		t.Errorf("pause a paused release = %d %v, want 409", status, r)
	}
	if f := fe.getFlag(t, "checkout"); f["rollout_percentage"] != float64(5) {
		t.Errorf("pause changed the rollout: %v", f["rollout_percentage"])
	}

	clock.Advance(time.Hour)
	status, r = act("resume")
	if status != 200 || r["status"] != "running" || r["reason"] != nil || r["stage_index"] != float64(0) {
		t.Fatalf("resume = %d %v", status, r)
	}
	if got := ts(r["stage_started_at"]); !got.Equal(clock.Now()) || !got.After(ts(rel["stage_started_at"])) {
		t.Errorf("stage_started_at after resume = %v, want now (%v)", got, clock.Now())
	}
	if status, r := act("resume"); status != 409 {
		t.Errorf("resume a running release = %d %v, want 409", status, r)
	}

	version := fe.getFlag(t, "checkout")["version"].(float64)
	status, r = act("rollback")
	if status != 200 || r["status"] != "rolled_back" || r["reason"] != "rolled back by admin@example.com" || !ts(r["ended_at"]).Equal(clock.Now()) {
		t.Fatalf("rollback = %d %v", status, r)
	}
	f := fe.getFlag(t, "checkout")
	if f["rollout_percentage"] != float64(0) || f["version"] != version+1 {
		t.Errorf("flag after rollback: rollout %v version %v, want 0 and %v", f["rollout_percentage"], f["version"], version+1)
	}
	entries := fe.flagAudit(t, "checkout")
	want := []string{"create", "update", "release.started", "release.paused", "release.resumed", "update", "release.rolled_back"}
	if d := cmp.Diff(want, auditActions(entries)); d != "" {
		t.Errorf("audit actions (-want +got):\n%s", d)
	}
	if field(entries[1], "metadata", "source") != "release" || field(entries[1], "after_data", "rollout_percentage") != float64(0) {
		t.Errorf("rollback's flag write = %v", entries[1])
	}
	for _, action := range []string{"pause", "resume", "rollback", "cancel"} {
		if status, r := act(action); status != 409 {
			t.Errorf("%s a rolled-back release = %d %v, want 409", action, status, r)
		}
	}
	if _, got := fe.call(t, "GET", base, nil); field(got, "status") != "rolled_back" {
		t.Errorf("refused actions changed the release: %v", got)
	}

	// Cancel stops guarding and leaves the flag as it is.
	rel = fe.startRelease(t, "search")
	base = fe.releasesPath("production") + "/" + rel["id"].(string)
	before := fe.getFlag(t, "search")
	status, r = act("cancel")
	if status != 200 || r["status"] != "cancelled" || r["reason"] != "cancelled by admin@example.com" || r["ended_at"] == nil {
		t.Fatalf("cancel = %d %v", status, r)
	}
	if d := cmp.Diff(before, fe.getFlag(t, "search")); d != "" {
		t.Errorf("cancel changed the flag (-before +after):\n%s", d)
	}
	if status, r := act("cancel"); status != 409 {
		t.Errorf("cancel a cancelled release = %d %v, want 409", status, r)
	}
	// A paused release may be cancelled, and the flag may then be
	// released again.
	rel = fe.startRelease(t, "search")
	base = fe.releasesPath("production") + "/" + rel["id"].(string)
	if status, _ := act("pause"); status != 200 {
		t.Fatalf("pause = %d", status)
	}
	if status, r := act("cancel"); status != 200 || r["status"] != "cancelled" {
		t.Errorf("cancel a paused release = %d %v", status, r)
	}
}

func TestReleaseAccessByRole(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	fe.createFlag(t, map[string]any{"key": "checkout", "is_enabled": true})
	fe.createFlag(t, map[string]any{"key": "search", "is_enabled": true})
	project, envs := fe.s.DefaultProject(t)
	viewerID, viewer := fe.s.User(t, "viewer@example.com", "viewer")
	fe.s.Member(t, project, viewerID, "viewer")
	editorID, editor := fe.s.User(t, "editor@example.com", "editor")
	fe.s.Member(t, project, editorID, "editor")
	readOnly := fe.s.Token(t, editorID, "read_only", nil)
	sdk := fe.s.SDKKey(t, envs["production"])

	rel := fe.startRelease(t, "checkout")
	base := fe.releasesPath("production") + "/" + rel["id"].(string)
	for _, who := range []struct{ name, bearer string }{{"viewer", viewer}, {"read_only token", readOnly}} {
		if status, body := fe.call(t, "POST", fe.flags("production")+"/search/releases", releaseInput(), who.bearer); status != 403 {
			t.Errorf("%s starts = %d %v, want 403", who.name, status, body)
		}
		for _, action := range []string{"pause", "resume", "rollback", "cancel"} {
			if status, body := fe.call(t, "POST", base+"/"+action, nil, who.bearer); status != 403 {
				t.Errorf("%s %s = %d %v, want 403", who.name, action, status, body)
			}
		}
		for _, p := range []string{fe.releasesPath("production"), base, base + "/checks"} {
			if status, body := fe.call(t, "GET", p, nil, who.bearer); status != 200 {
				t.Errorf("%s GET %s = %d %v, want 200", who.name, p, status, body)
			}
		}
	}
	if _, got := fe.call(t, "GET", base, nil); field(got, "status") != "running" {
		t.Errorf("refused writes changed the release: %v", got)
	}
	// Editors and the environment's server SDK key write.
	if status, body := fe.call(t, "POST", base+"/pause", nil, editor); status != 200 {
		t.Errorf("editor pauses = %d %v", status, body)
	}
	status, body := fe.call(t, "POST", fe.flags("production")+"/search/releases", releaseInput(), sdk)
	if status != 201 || field(body, "created_by") != nil {
		t.Errorf("SDK key starts = %d %v, want 201 with created_by null", status, body)
	}
}

// A person's change of what a release guards cancels it; other changes
// and the release's own writes do not.
func TestPersonsFlagChangeCancelsRelease(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	flags := fe.flags("production")
	cases := []struct {
		name, method, path string
		body               any
		cancels            bool
	}{
		{"rollout_percentage", "PATCH", "", map[string]any{"rollout_percentage": 80}, true},
		{"is_enabled", "PATCH", "", map[string]any{"is_enabled": false}, true},
		{"rules", "PATCH", "", map[string]any{"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []any{"pro"}}}}, true},
		{"archive", "POST", "/archive", nil, true},
		{"delete", "DELETE", "", nil, true},
		{"description", "PATCH", "", map[string]any{"description": "checkout, new flow"}, false},
	}
	for i, c := range cases {
		key := fmt.Sprintf("flag-%d", i)
		fe.createFlag(t, map[string]any{"key": key, "is_enabled": true})
		id := fe.startRelease(t, key)["id"].(string)
		status, body := fe.call(t, c.method, flags+"/"+key+c.path, c.body)
		if status >= 300 {
			t.Fatalf("%s: %s = %d %v", c.name, c.method, status, body)
		}
		_, rel := fe.call(t, "GET", fe.releasesPath("production")+"/"+id, nil)
		if !c.cancels {
			if field(rel, "status") != "running" || field(rel, "reason") != nil {
				t.Errorf("%s: release = %v, want still running", c.name, rel)
			}
			continue
		}
		if field(rel, "status") != "cancelled" || field(rel, "reason") != "flag changed by admin@example.com" || field(rel, "ended_at") == nil {
			t.Errorf("%s: release = %v, want cancelled by the change", c.name, rel)
		}
		if c.method != "DELETE" {
			// The person's write and the cancellation commit together, in
			// either order.
			actions := auditActions(fe.flagAudit(t, key))
			if n := len(actions); n != 5 || actions[2] != "release.started" || !slices.Contains(actions[3:], "release.cancelled") {
				t.Errorf("%s: audit actions %v, want release.cancelled with the write", c.name, actions)
			}
		}
	}
	if status, list := fe.call(t, "GET", fe.releasesPath("production")+"?status=running", nil); status != 200 || len(list.([]any)) != 1 {
		t.Errorf("running releases = %d %v, want only the description case's", status, list)
	}
}

func TestReleaseWebhook(t *testing.T) {
	t.Parallel()
	fe := newReleaseAPIEnv(t)
	recv := newReceiver(t, nil)
	if status, body := fe.call(t, "POST", fe.env("production")+"/webhooks", map[string]any{"name": "hook", "url": recv.URL + "/hook", "secret": "s3cret"}); status != 200 {
		t.Fatalf("create webhook = %d %v", status, body)
	}
	fe.createFlag(t, map[string]any{"key": "checkout", "is_enabled": true})
	rel := fe.startRelease(t, "checkout")

	var got received
	waitFor(t, "release.started delivery", func() bool {
		for _, r := range recv.requests() {
			if r.header.Get("X-Service-Event") == "release.started" {
				got = r
				return true
			}
		}
		return false
	})
	if !verifySignature("s3cret", got.body, got.header.Get("X-Service-Signature")) {
		t.Errorf("release.started is not signed like other events")
	}
	var payload struct {
		Event   string         `json:"event"`
		Actor   string         `json:"actor"`
		FlagKey string         `json:"flag_key"`
		Data    map[string]any `json:"data"`
	}
	if err := json.Unmarshal(got.body, &payload); err != nil {
		t.Fatalf("payload %s: %v", got.body, err)
	}
	if payload.Event != "release.started" || payload.Actor != "admin@example.com" || payload.FlagKey != "checkout" {
		t.Errorf("payload = %s", got.body)
	}
	if d := cmp.Diff(rel, payload.Data); d != "" {
		t.Errorf("data is not the release (-release +data):\n%s", d)
	}
	// Chat integrations may select release events.
	chat := map[string]any{"kind": "slack", "name": "releases", "webhook_url": "http://127.0.0.1:9/chat", "enabled": false,
		"events": []any{"release.started", "release.rolled_back", "release.cancelled"}}
	if status, body := fe.call(t, "POST", fe.env("production")+"/integrations", chat); status != 200 || len(field(body, "events").([]any)) != 3 {
		t.Errorf("chat integration with release events = %d %v, want 200", status, body)
	}
	// The release's flag write is announced too.
	waitFor(t, "flag.updated delivery", func() bool {
		for _, r := range recv.requests() {
			if r.header.Get("X-Service-Event") == "flag.updated" {
				return true
			}
		}
		return false
	})
}
