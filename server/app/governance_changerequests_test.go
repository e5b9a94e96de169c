package app_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// crEnv is a production environment that requires approval, with a flag,
// two editors, a viewer and a webhook recording every notification.
type crEnv struct {
	*flagEnv
	editorA, editorB, viewer string
	hook                     *receiver
}

func newCREnv(t *testing.T) *crEnv {
	t.Helper()
	fe := newGovEnv(t)
	project, _ := fe.s.DefaultProject(t)
	ce := &crEnv{flagEnv: fe, hook: newReceiver(t, nil)}
	for _, u := range []struct {
		email, role string
		token       *string
	}{{"a@example.com", "editor", &ce.editorA}, {"b@example.com", "editor", &ce.editorB}, {"v@example.com", "viewer", &ce.viewer}} {
		id, tok := fe.s.User(t, u.email, "viewer")
		fe.s.Member(t, project, id, u.role)
		*u.token = tok
	}
	fe.call(t, "POST", fe.env("production")+"/webhooks", map[string]any{"name": "all", "url": ce.hook.URL})
	if status, body := fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "gate", "is_enabled": false, "rollout_percentage": 10}); status != 200 {
		t.Fatalf("create flag = %d %v", status, body)
	}
	fe.requireApproval(t, "production", true)
	return ce
}

// open queues a patch as editorA and returns the change request's id.
func (ce *crEnv) open(t *testing.T, patch map[string]any) string {
	t.Helper()
	status, cr := ce.call(t, "PATCH", ce.flags("production")+"/gate", patch, ce.editorA)
	if status != 202 || field(cr, "status") != "pending" {
		t.Fatalf("patch under approval = %d %v", status, cr)
	}
	return fmt.Sprint(field(cr, "id"))
}

func (ce *crEnv) cr(id string) string {
	return ce.env("production") + "/change-requests/" + id
}

// eventsSeen returns the webhook's events so far, in order.
func (ce *crEnv) eventsSeen() []string {
	var out []string
	for _, r := range ce.hook.requests() {
		out = append(out, r.header.Get("X-Service-Event"))
	}
	return out
}

// TestChangeRequestApprovalFlow is the 202 flow end to end: patch, pending,
// approval by another editor, flag updated, audited and notified.
func TestChangeRequestApprovalFlow(t *testing.T) {
	t.Parallel()
	ce := newCREnv(t)
	id := ce.open(t, map[string]any{"is_enabled": true})

	// Approval applies to the current state, not a snapshot: a change
	// made after the request was opened survives it.
	ce.requireApproval(t, "production", false)
	ce.call(t, "PATCH", ce.flags("production")+"/gate", map[string]any{"rollout_percentage": 55})
	ce.requireApproval(t, "production", true)

	if status, body := ce.call(t, "POST", ce.cr(id)+"/approve", nil, ce.editorA); status != 403 {
		t.Errorf("approval by the requester = %d %v, want 403", status, body)
	}
	if status, _ := ce.call(t, "POST", ce.cr(id)+"/approve", nil, ce.viewer); status != 403 {
		t.Errorf("approval by a viewer = %d, want 403", status)
	}
	status, f := ce.call(t, "POST", ce.cr(id)+"/approve", nil, ce.editorB)
	if status != 200 || field(f, "is_enabled") != true || field(f, "rollout_percentage") != float64(55) || field(f, "version") != float64(3) {
		t.Fatalf("approve = %d %v", status, f)
	}
	if _, f := ce.call(t, "GET", ce.flags("production")+"/gate", nil); field(f, "is_enabled") != true || field(f, "version") != float64(3) {
		t.Errorf("flag after approval = %v", f)
	}
	status, list := ce.call(t, "GET", ce.env("production")+"/change-requests?status=approved", nil)
	if status != 200 || len(list.([]any)) != 1 {
		t.Fatalf("approved list = %d %v", status, list)
	}
	cr := list.([]any)[0]
	if field(cr, "reviewed_by") != "b@example.com" || field(cr, "reviewed_at") == nil || field(cr, "requested_by") != "a@example.com" {
		t.Errorf("approved change request = %v", cr)
	}
	_, entries := ce.call(t, "GET", ce.env("production")+"/audit?flag_key=gate&limit=1", nil)
	e := entries.([]any)[0]
	if field(e, "action") != "update" || field(e, "actor_email") != "b@example.com" ||
		field(e, "metadata", "source") != "change_request" || fmt.Sprint(field(e, "metadata", "change_request_id")) != id {
		t.Errorf("audit entry = %v", e)
	}
	waitFor(t, "notifications", func() bool { return len(ce.eventsSeen()) == 5 })
	want := []string{"flag.created", "change_request.opened", "flag.updated", "change_request.approved", "flag.updated"}
	if d := cmp.Diff(want, ce.eventsSeen()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	var approved map[string]any
	_ = json.Unmarshal(ce.hook.requests()[3].body, &approved)
	if field(approved, "data", "status") != "approved" || field(approved, "actor") != "b@example.com" || fmt.Sprint(field(approved, "data", "id")) != id {
		t.Errorf("change_request.approved payload = %v", approved)
	}

	// A request whose patch no longer applies answers 422 and stays pending.
	id2 := ce.open(t, map[string]any{"flag_type": "boolean"})
	ce.requireApproval(t, "production", false)
	ce.call(t, "PATCH", ce.flags("production")+"/gate", map[string]any{"flag_type": "string", "default_value": "x"})
	if status, body := ce.call(t, "POST", ce.cr(id2)+"/approve", nil, ce.editorB); status != 422 {
		t.Errorf("approving a patch that no longer validates = %d %v, want 422", status, body)
	}
	if _, l := ce.call(t, "GET", ce.env("production")+"/change-requests?status=pending", nil); len(l.([]any)) != 1 {
		t.Errorf("pending after a failed approval = %v", l)
	}
}

// TestChangeRequestStates walks the state table of change requests
// (docs/reference/flags.md, Change requests).
func TestChangeRequestStates(t *testing.T) {
	t.Parallel()
	ce := newCREnv(t)
	approved := ce.open(t, map[string]any{"rollout_percentage": 20})
	ce.call(t, "POST", ce.cr(approved)+"/approve", nil, ce.editorB)
	rejected := ce.open(t, map[string]any{"rollout_percentage": 30})
	if status, _ := ce.call(t, "POST", ce.cr(rejected)+"/reject", map[string]any{"reason": "not during the sale"}, ce.editorB); status != 204 {
		t.Fatalf("reject = %d", status)
	}
	cancelled := ce.open(t, map[string]any{"rollout_percentage": 40})
	if status, _ := ce.call(t, "DELETE", ce.cr(cancelled), nil, ce.editorB); status != 404 {
		t.Errorf("cancel by another editor = %d, want 404", status)
	}
	if status, _ := ce.call(t, "DELETE", ce.cr(cancelled), nil, ce.editorA); status != 204 {
		t.Fatalf("cancel by the requester = %d", status)
	}
	byAdmin := ce.open(t, map[string]any{"rollout_percentage": 50})
	if status, _ := ce.call(t, "DELETE", ce.cr(byAdmin), nil); status != 204 {
		t.Errorf("cancel by a workspace admin = %d, want 204", status)
	}
	pending := ce.open(t, map[string]any{"rollout_percentage": 60})

	// Rejection and cancellation left the flag alone.
	if _, f := ce.call(t, "GET", ce.flags("production")+"/gate", nil); field(f, "rollout_percentage") != float64(20) {
		t.Errorf("flag = %v, want only the approved change", f)
	}
	_, list := ce.call(t, "GET", ce.env("production")+"/change-requests", nil)
	var statuses []string
	for _, cr := range list.([]any) {
		statuses = append(statuses, field(cr, "status").(string))
		if fmt.Sprint(field(cr, "id")) == rejected && field(cr, "reason") != "not during the sale" {
			t.Errorf("rejected request = %v", cr)
		}
	}
	if d := cmp.Diff([]string{"pending", "cancelled", "cancelled", "rejected", "approved"}, statuses); d != "" {
		t.Errorf("statuses, newest first (-want +got):\n%s", d)
	}
	if status, _ := ce.call(t, "GET", ce.env("production")+"/change-requests?status=bogus", nil); status != 422 {
		t.Errorf("unknown status filter = %d, want 422", status)
	}

	for _, c := range []struct{ name, id string }{{"approved", approved}, {"rejected", rejected}, {"cancelled", cancelled}} {
		t.Run(c.name, func(t *testing.T) {
			if status, _ := ce.call(t, "POST", ce.cr(c.id)+"/approve", nil, ce.editorB); status != 409 {
				t.Errorf("approve = %d, want 409", status)
			}
			if status, _ := ce.call(t, "POST", ce.cr(c.id)+"/reject", map[string]any{}, ce.editorB); status != 409 {
				t.Errorf("reject = %d, want 409", status)
			}
			if status, _ := ce.call(t, "DELETE", ce.cr(c.id), nil, ce.editorA); status != 404 {
				t.Errorf("cancel = %d, want 404", status)
			}
		})
	}
	if status, _ := ce.call(t, "POST", ce.cr("999999")+"/approve", nil, ce.editorB); status != 404 {
		t.Errorf("approve unknown = %d, want 404", status)
	}
	if status, _ := ce.call(t, "POST", ce.env("staging")+"/change-requests/"+pending+"/approve", nil, ce.editorB); status != 404 {
		t.Errorf("approve through another environment = %d, want 404", status)
	}
	if status, _ := ce.call(t, "POST", ce.cr(pending)+"/reject", nil, ce.viewer); status != 403 {
		t.Errorf("reject by a viewer = %d, want 403", status)
	}

	waitFor(t, "the rejection notification", func() bool {
		for _, r := range ce.hook.requests() {
			if r.header.Get("X-Service-Event") == "change_request.rejected" {
				var p map[string]any
				_ = json.Unmarshal(r.body, &p)
				return field(p, "data", "reason") == "not during the sale" && field(p, "actor") == "b@example.com"
			}
		}
		return false
	})
}

// TestConcurrentApprovals lets several reviewers approve one request at
// once: exactly one succeeds, the others get 409, the patch applies once.
func TestConcurrentApprovals(t *testing.T) {
	t.Parallel()
	ce := newCREnv(t)
	id := ce.open(t, map[string]any{"is_enabled": true})
	project, _ := ce.s.DefaultProject(t)
	var reviewers []string
	for i := range 6 {
		uid, tok := ce.s.User(t, fmt.Sprintf("r%d@example.com", i), "viewer")
		ce.s.Member(t, project, uid, "editor")
		reviewers = append(reviewers, tok)
	}
	var wg sync.WaitGroup
	statuses := make([]int, len(reviewers))
	start := make(chan struct{})
	for i, tok := range reviewers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], _ = ce.call(t, "POST", ce.cr(id)+"/approve", nil, tok)
		}()
	}
	close(start)
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if counts[200] != 1 || counts[409] != len(reviewers)-1 {
		t.Errorf("statuses = %v, want one 200 and the rest 409", statuses)
	}
	if _, f := ce.call(t, "GET", ce.flags("production")+"/gate", nil); field(f, "version") != float64(2) {
		t.Errorf("flag version = %v, want 2 (one write)", field(f, "version"))
	}
	if n := ce.count(t, `SELECT count(*) FROM audit_entries WHERE metadata->>'source' = 'change_request'`); n != 1 {
		t.Errorf("%d change-request audit entries, want 1", n)
	}
}
