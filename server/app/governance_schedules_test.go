package app_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// newClockEnv starts an instance whose clock the test moves.
func newClockEnv(t *testing.T, clock *apptest.Clock, opts ...app.Option) *flagEnv {
	t.Helper()
	return newGovEnv(t, append([]app.Option{app.WithClock(clock.Now)}, opts...)...)
}

func TestScheduledChangeCreateListDelete(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	fe := newClockEnv(t, clock, app.WithoutScheduler())
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "f", "is_enabled": false})
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "g", "is_enabled": false})
	at := func(d time.Duration) string { return clock.Now().Add(d).Format(time.RFC3339Nano) }
	path := func(key string) string { return fe.flags("production") + "/" + key + "/scheduled-changes" }

	cases := []struct {
		name, key string
		body      map[string]any
		want      int
	}{
		{"in an hour", "f", map[string]any{"scheduled_at": at(time.Hour), "patch": map[string]any{"is_enabled": true}}, 200},
		{"20 s ago is within the tolerance", "f", map[string]any{"scheduled_at": at(-20 * time.Second), "patch": map[string]any{"rollout_percentage": 5}}, 200},
		{"other flag, sooner", "g", map[string]any{"scheduled_at": at(time.Minute), "patch": map[string]any{"is_enabled": true}}, 200},
		{"31 s ago", "f", map[string]any{"scheduled_at": at(-31 * time.Second), "patch": map[string]any{"is_enabled": true}}, 422},
		{"invalid patch", "f", map[string]any{"scheduled_at": at(time.Hour), "patch": map[string]any{"rollout_percentage": 101}}, 422},
		{"patch failing flag validation", "f", map[string]any{"scheduled_at": at(time.Hour), "patch": map[string]any{"default_value": "text"}}, 422},
		{"patch changing the key", "f", map[string]any{"scheduled_at": at(time.Hour), "patch": map[string]any{"key": "other"}}, 422},
		{"not a timestamp", "f", map[string]any{"scheduled_at": "tomorrow", "patch": map[string]any{}}, 422},
		{"missing flag", "nope", map[string]any{"scheduled_at": at(time.Hour), "patch": map[string]any{"is_enabled": true}}, 404},
	}
	for _, c := range cases {
		if status, body := fe.call(t, "POST", path(c.key), c.body); status != c.want {
			t.Errorf("%s = %d %v, want %d", c.name, status, body, c.want)
		}
	}
	_, list := fe.call(t, "GET", fe.env("production")+"/scheduled-changes", nil)
	var keys []string
	for _, sc := range list.([]any) {
		keys = append(keys, field(sc, "flag_key").(string))
		if field(sc, "executed_at") != nil || field(sc, "attempts") != float64(0) || field(sc, "last_error") != nil {
			t.Errorf("new scheduled change = %v", sc)
		}
	}
	if d := cmp.Diff([]string{"f", "g", "f"}, keys); d != "" {
		t.Errorf("ordered by scheduled_at (-want +got):\n%s", d)
	}
	status, one := fe.call(t, "GET", path("g"), nil)
	if status != 200 || len(one.([]any)) != 1 {
		t.Fatalf("per flag = %d %v", status, one)
	}
	gID := field(one.([]any)[0], "id").(string)

	// Editors may schedule; viewers may only read.
	project, _ := fe.s.DefaultProject(t)
	vid, viewer := fe.s.User(t, "viewer@example.com", "viewer")
	fe.s.Member(t, project, vid, "viewer")
	if status, _ := fe.call(t, "POST", path("f"), map[string]any{"scheduled_at": at(time.Hour), "patch": map[string]any{}}, viewer); status != 403 {
		t.Errorf("viewer schedules = %d, want 403", status)
	}
	if status, _ := fe.call(t, "GET", path("f"), nil, viewer); status != 200 {
		t.Errorf("viewer lists = %d, want 200", status)
	}

	fe.requireApproval(t, "production", true)
	if status, _ := fe.call(t, "POST", path("f"), map[string]any{"scheduled_at": at(time.Hour), "patch": map[string]any{"is_enabled": true}}); status != 409 {
		t.Errorf("scheduling under approval = %d, want 409", status)
	}
	fe.requireApproval(t, "production", false)

	if status, _ := fe.call(t, "DELETE", fe.env("staging")+"/scheduled-changes/"+gID, nil); status != 404 {
		t.Errorf("delete through another environment = %d, want 404", status)
	}
	if status, _ := fe.call(t, "DELETE", fe.env("production")+"/scheduled-changes/"+gID, nil); status != 204 {
		t.Errorf("delete = %d, want 204", status)
	}
	if status, _ := fe.call(t, "DELETE", fe.env("production")+"/scheduled-changes/"+gID, nil); status != 404 {
		t.Errorf("second delete = %d, want 404", status)
	}
}

func TestScheduledChangeRuns(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	fe := newClockEnv(t, clock)
	hook := newReceiver(t, nil)
	fe.call(t, "POST", fe.env("production")+"/webhooks", map[string]any{"name": "h", "url": hook.URL})
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "launch", "is_enabled": false})
	_, sc := fe.call(t, "POST", fe.flags("production")+"/launch/scheduled-changes", map[string]any{
		"scheduled_at": clock.Now().Add(time.Hour).Format(time.RFC3339), "patch": map[string]any{"is_enabled": true, "rollout_percentage": 50},
	})
	id := field(sc, "id").(string)
	get := func() any {
		_, list := fe.call(t, "GET", fe.flags("production")+"/launch/scheduled-changes", nil)
		return list.([]any)[0]
	}
	// Not due yet: nothing happens however often the worker looks.
	clock.Advance(59 * time.Minute)
	if _, f := fe.call(t, "GET", fe.flags("production")+"/launch", nil); field(f, "is_enabled") != false {
		t.Fatalf("applied early: %v", f)
	}
	clock.Advance(2 * time.Minute)
	waitFor(t, "the scheduled change to run", func() bool { return field(get(), "executed_at") != nil })
	if sc := get(); field(sc, "attempts") != float64(1) || field(sc, "last_error") != nil {
		t.Errorf("executed = %v", sc)
	}
	if _, f := fe.call(t, "GET", fe.flags("production")+"/launch", nil); field(f, "is_enabled") != true || field(f, "rollout_percentage") != float64(50) || field(f, "version") != float64(2) {
		t.Errorf("flag = %v", f)
	}
	_, entries := fe.call(t, "GET", fe.env("production")+"/audit?flag_key=launch&limit=1", nil)
	if e := entries.([]any)[0]; field(e, "action") != "update" || field(e, "metadata", "source") != "schedule" || field(e, "actor_email") != "admin@example.com" {
		t.Errorf("audit = %v", e)
	}
	waitFor(t, "flag.updated", func() bool {
		r := hook.requests()
		return len(r) == 2 && r[1].header.Get("X-Service-Event") == "flag.updated"
	})
	if status, _ := fe.call(t, "DELETE", fe.env("production")+"/scheduled-changes/"+id, nil); status != 404 {
		t.Errorf("deleting an executed change = %d, want 404", status)
	}
}

func TestScheduledChangeFailureAndApprovalWait(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	fe := newClockEnv(t, clock)
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "color", "is_enabled": true, "flag_type": "string", "default_value": "red"})
	schedule := func(key string, patch map[string]any) string {
		status, sc := fe.call(t, "POST", fe.flags("production")+"/"+key+"/scheduled-changes", map[string]any{
			"scheduled_at": clock.Now().Add(time.Minute).Format(time.RFC3339), "patch": patch,
		})
		if status != 200 {
			t.Fatalf("schedule = %d %v", status, sc)
		}
		return field(sc, "id").(string)
	}
	schedule("color", map[string]any{"default_value": "blue"})
	get := func(key string) any {
		_, list := fe.call(t, "GET", fe.flags("production")+"/"+key+"/scheduled-changes", nil)
		return list.([]any)[0]
	}

	// The patch stops validating before it is due: the flag turns integer.
	fe.call(t, "PATCH", fe.flags("production")+"/color", map[string]any{"flag_type": "integer", "default_value": 3})
	clock.Advance(2 * time.Minute)
	waitFor(t, "the first failure", func() bool { return field(get("color"), "attempts") == float64(1) })
	sc := get("color")
	if field(sc, "executed_at") != nil || field(sc, "last_error") == nil {
		t.Fatalf("failed change = %v", sc)
	}
	// Not retried within 60 s of the failure, retried after.
	clock.Advance(30 * time.Second)
	fe.call(t, "PATCH", fe.flags("production")+"/color", map[string]any{"flag_type": "string", "default_value": "green"})
	if field(get("color"), "attempts") != float64(1) {
		t.Errorf("retried within 60 s: %v", get("color"))
	}
	clock.Advance(31 * time.Second)
	waitFor(t, "the retry to succeed", func() bool { return field(get("color"), "executed_at") != nil })
	if sc := get("color"); field(sc, "attempts") != float64(2) || field(sc, "last_error") != nil {
		t.Errorf("after the successful retry = %v, want attempts 2 and last_error cleared", sc)
	}
	if _, f := fe.call(t, "GET", fe.flags("production")+"/color", nil); field(f, "default_value") != "blue" {
		t.Errorf("flag = %v", f)
	}
	// Approval switched on after scheduling: the due change waits, neither
	// applied nor failed, and runs once approval is off again.
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "held", "is_enabled": false})
	schedule("held", map[string]any{"is_enabled": true})
	fe.requireApproval(t, "production", true)
	clock.Advance(5 * time.Minute)
	// Give the worker (10 ms interval) many chances; poll that nothing moves.
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		if sc := get("held"); field(sc, "executed_at") != nil || field(sc, "attempts") != float64(0) {
			t.Fatalf("ran while approval is required: %v", sc)
		}
	}
	fe.requireApproval(t, "production", false)
	waitFor(t, "the held change to run once approval is off", func() bool { return field(get("held"), "executed_at") != nil })
	if sc := get("held"); field(sc, "attempts") != float64(1) || field(sc, "last_error") != nil {
		t.Errorf("held change = %v", sc)
	}
}

// TestScheduledChangeExactlyOnce runs the worker on two instances sharing a
// database (a third, without a worker, takes the requests): every change is
// applied exactly once.
func TestScheduledChangeExactlyOnce(t *testing.T) {
	t.Parallel()
	clock := apptest.NewClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	a := newClockEnv(t, clock, app.WithoutScheduler())
	b := apptest.Start(t, map[string]string{"DATABASE_URL": a.s.DBURL}, fastWorkers(app.WithClock(clock.Now))...)
	apptest.Start(t, map[string]string{"DATABASE_URL": a.s.DBURL}, fastWorkers(app.WithClock(clock.Now))...)
	const n = 20
	for i := range n {
		key := fmt.Sprintf("f%d", i)
		a.call(t, "POST", a.flags("production"), map[string]any{"key": key, "is_enabled": false})
		status, body := a.call(t, "POST", a.flags("production")+"/"+key+"/scheduled-changes", map[string]any{
			"scheduled_at": clock.Now().Add(time.Minute).Format(time.RFC3339), "patch": map[string]any{"is_enabled": true},
		})
		if status != 200 {
			t.Fatalf("schedule = %d %v", status, body)
		}
	}
	clock.Advance(2 * time.Minute)
	fb := &flagEnv{s: b}
	waitFor(t, "all changes to run", func() bool {
		return fb.count(t, `SELECT count(*) FROM scheduled_changes WHERE executed_at IS NOT NULL`) == n
	})
	if got := fb.count(t, `SELECT count(*) FROM audit_entries WHERE metadata->>'source' = 'schedule'`); got != n {
		t.Errorf("%d schedule audit entries, want %d (one per change)", got, n)
	}
	if got := fb.count(t, `SELECT count(*) FROM flags WHERE version <> 2`); got != 0 {
		t.Errorf("%d flags were not written exactly once", got)
	}
	if got := fb.count(t, `SELECT count(*) FROM scheduled_changes WHERE attempts <> 1`); got != 0 {
		t.Errorf("%d changes took more than one attempt", got)
	}
}
