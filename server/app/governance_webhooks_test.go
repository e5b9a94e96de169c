package app_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// verifySignature is the receiver's check, written independently of the
// server's code: HMAC-SHA256 of the raw body, lowercase hex, "sha256=".
func verifySignature(secret string, body []byte, header string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(want), []byte(header))
}

func TestWebhookCRUD(t *testing.T) {
	t.Parallel()
	fe := newGovEnv(t)
	base := fe.env("production") + "/webhooks"

	status, w := fe.call(t, "POST", base, map[string]any{"name": "ci", "url": "https://hooks.example.com/x", "secret": "s3cret"})
	if status != 200 || field(w, "has_secret") != true || field(w, "enabled") != true || field(w, "secret") != nil {
		t.Fatalf("create = %d %v", status, w)
	}
	id := field(w, "id").(string)
	if status, body := fe.call(t, "POST", base, map[string]any{"name": "x", "url": ""}); status != 422 {
		t.Errorf("empty url = %d %v, want 422", status, body)
	}
	if status, body := fe.call(t, "POST", base, map[string]any{"name": "x", "url": "ftp://example.com"}); status != 422 {
		t.Errorf("ftp url = %d %v, want 422", status, body)
	}
	status, w = fe.call(t, "PATCH", base+"/"+id, map[string]any{"secret": nil, "enabled": false, "name": "renamed"})
	if status != 200 || field(w, "has_secret") != false || field(w, "enabled") != false || field(w, "name") != "renamed" || field(w, "url") != "https://hooks.example.com/x" {
		t.Fatalf("patch = %d %v", status, w)
	}
	if status, list := fe.call(t, "GET", base, nil); status != 200 || len(list.([]any)) != 1 {
		t.Errorf("list = %d %v", status, list)
	}
	if status, list := fe.call(t, "GET", base+"/"+id+"/deliveries", nil); status != 200 || len(list.([]any)) != 0 {
		t.Errorf("deliveries = %d %v", status, list)
	}
	// Project admins only: an editor gets 403, another environment's id 404.
	project, _ := fe.s.DefaultProject(t)
	editorID, editor := fe.s.User(t, "editor@example.com", "editor")
	fe.s.Member(t, project, editorID, "editor")
	if status, _ := fe.call(t, "GET", base, nil, editor); status != 403 {
		t.Errorf("editor list = %d, want 403", status)
	}
	if status, _ := fe.call(t, "PATCH", fe.env("staging")+"/webhooks/"+id, map[string]any{"name": "n"}); status != 404 {
		t.Errorf("patch through another environment = %d, want 404", status)
	}
	if status, _ := fe.call(t, "DELETE", base+"/"+id, nil); status != 204 {
		t.Errorf("delete = %d", status)
	}
	if status, _ := fe.call(t, "DELETE", base+"/"+id, nil); status != 404 {
		t.Errorf("second delete = %d, want 404", status)
	}
	if status, _ := fe.call(t, "GET", base+"/"+id+"/deliveries", nil); status != 404 {
		t.Errorf("deliveries of a deleted webhook = %d, want 404", status)
	}
}

func TestWebhookDeliveryIsSignedAndComplete(t *testing.T) {
	t.Parallel()
	fe := newGovEnv(t)
	signed := newReceiver(t, nil)
	unsigned := newReceiver(t, nil)
	disabled := newReceiver(t, nil)
	base := fe.env("production") + "/webhooks"
	fe.call(t, "POST", base, map[string]any{"name": "signed", "url": signed.URL + "/hook", "secret": "topsecret"})
	fe.call(t, "POST", base, map[string]any{"name": "plain", "url": unsigned.URL})
	fe.call(t, "POST", base, map[string]any{"name": "off", "url": disabled.URL, "secret": "x", "enabled": false})
	// Another environment's webhook hears nothing of production.
	other := newReceiver(t, nil)
	fe.call(t, "POST", fe.env("staging")+"/webhooks", map[string]any{"name": "staging", "url": other.URL})

	if status, body := fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "checkout", "is_enabled": true, "rollout_percentage": 30}); status != 200 {
		t.Fatalf("create = %d %v", status, body)
	}
	waitFor(t, "both webhooks", func() bool { return len(signed.requests()) == 1 && len(unsigned.requests()) == 1 })

	got := signed.requests()[0]
	if !verifySignature("topsecret", got.body, got.header.Get("X-Service-Signature")) {
		t.Errorf("signature %q does not verify over %s", got.header.Get("X-Service-Signature"), got.body)
	}
	if verifySignature("wrong", got.body, got.header.Get("X-Service-Signature")) {
		t.Error("signature verifies under another secret")
	}
	if got.header.Get("Content-Type") != "application/json" || got.header.Get("X-Service-Event") != "flag.created" {
		t.Errorf("headers = %v", got.header)
	}
	var payload map[string]any
	if err := json.Unmarshal(got.body, &payload); err != nil {
		t.Fatal(err)
	}
	project, _ := fe.s.DefaultProject(t)
	if field(payload, "event") != "flag.created" || field(payload, "delivery_id") != got.header.Get("X-Service-Delivery") ||
		field(payload, "environment", "id") != fe.envs["production"] || field(payload, "environment", "name") != "Production" ||
		field(payload, "project", "id") != project.String() || field(payload, "project", "name") != "Default" ||
		field(payload, "actor") != "admin@example.com" || field(payload, "flag_key") != "checkout" ||
		field(payload, "data", "rollout_percentage") != float64(30) || field(payload, "data", "version") != float64(1) {
		t.Errorf("payload = %s", got.body)
	}
	if _, err := time.Parse(time.RFC3339Nano, field(payload, "occurred_at").(string)); err != nil {
		t.Errorf("occurred_at: %v", err)
	}
	if h := unsigned.requests()[0].header; h.Get("X-Service-Signature") != "" || h.Get("X-Service-Event") != "flag.created" {
		t.Errorf("unsigned webhook headers = %v", h)
	}

	// Every event of the flag's life reaches the webhook, in order.
	fe.call(t, "PATCH", fe.flags("production")+"/checkout", map[string]any{"is_enabled": false})
	fe.call(t, "POST", fe.flags("production")+"/checkout/archive", nil)
	fe.call(t, "POST", fe.flags("production")+"/checkout/promote", map[string]any{"target_env_id": fe.envs["staging"]})
	fe.call(t, "DELETE", fe.flags("production")+"/checkout", nil)
	waitFor(t, "four deliveries", func() bool { return len(signed.requests()) == 4 })
	var events []string
	for _, r := range signed.requests() {
		events = append(events, r.header.Get("X-Service-Event"))
	}
	// Promotion notifies the target environment (staging), not production.
	if d := cmp.Diff([]string{"flag.created", "flag.updated", "flag.updated", "flag.deleted"}, events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	waitFor(t, "the promotion in staging", func() bool { return len(other.requests()) == 1 })
	if e := other.requests()[0].header.Get("X-Service-Event"); e != "flag.promoted" {
		t.Errorf("staging got %q, want flag.promoted", e)
	}
	if n := len(disabled.requests()); n != 0 {
		t.Errorf("the disabled webhook received %d deliveries", n)
	}

	// The delivery log: newest first, status and body recorded.
	_, list := fe.call(t, "GET", base, nil)
	var signedID string
	for _, w := range list.([]any) {
		if field(w, "name") == "signed" {
			signedID = field(w, "id").(string)
		}
	}
	status, deliveries := fe.call(t, "GET", base+"/"+signedID+"/deliveries", nil)
	ds, _ := deliveries.([]any)
	if status != 200 || len(ds) != 4 || field(ds[0], "event") != "flag.deleted" || field(ds[0], "status_code") != float64(200) ||
		field(ds[0], "response_body") != "ok from receiver" || field(ds[0], "error") != nil {
		t.Errorf("deliveries = %d %v", status, deliveries)
	}
}

func TestWebhookRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	fe := newGovEnv(t)
	// Fails twice, then accepts.
	flaky := newReceiver(t, func(n int) int {
		if n <= 2 {
			return 503
		}
		return 200
	})
	// Never accepts: one attempt plus three retries, then it gives up.
	down := newReceiver(t, func(int) int { return 500 })
	base := fe.env("production") + "/webhooks"
	_, w := fe.call(t, "POST", base, map[string]any{"name": "flaky", "url": flaky.URL})
	flakyID := field(w, "id").(string)
	_, w = fe.call(t, "POST", base, map[string]any{"name": "down", "url": down.URL})
	downID := field(w, "id").(string)
	// A host that refuses connections: transport errors are logged and retried.
	_, w = fe.call(t, "POST", base, map[string]any{"name": "refused", "url": "http://127.0.0.1:1/hook"})
	refusedID := field(w, "id").(string)

	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "f", "is_enabled": true})
	waitFor(t, "flaky to accept", func() bool { return len(flaky.requests()) == 3 })
	waitFor(t, "the outbox to drain", func() bool { return fe.count(t, `SELECT count(*) FROM notification_outbox`) == 0 })
	if n := len(down.requests()); n != 4 {
		t.Errorf("failing receiver got %d attempts, want 4 (one and three retries)", n)
	}
	// The waits grow: 10 ms, 20 ms, 30 ms in this test (1 s, 5 s, 15 s by default).
	reqs := down.requests()
	for i, min := range []time.Duration{10, 20, 30} {
		if gap := reqs[i+1].at.Sub(reqs[i].at); gap < min*time.Millisecond {
			t.Errorf("retry %d came after %v, want at least %v", i+1, gap, min*time.Millisecond)
		}
	}
	// All attempts carry the same delivery id.
	if reqs[0].header.Get("X-Service-Delivery") != reqs[3].header.Get("X-Service-Delivery") {
		t.Error("retries changed the delivery id")
	}
	_, ds := fe.call(t, "GET", base+"/"+flakyID+"/deliveries", nil)
	codes := []any{}
	for _, d := range ds.([]any) {
		codes = append(codes, field(d, "status_code"))
	}
	if len(codes) != 3 || codes[0] != float64(200) || codes[1] != float64(503) || codes[2] != float64(503) {
		t.Errorf("flaky deliveries, newest first = %v", codes)
	}
	if _, ds := fe.call(t, "GET", base+"/"+downID+"/deliveries", nil); len(ds.([]any)) != 4 {
		t.Errorf("down deliveries = %v", ds)
	}
	_, ds = fe.call(t, "GET", base+"/"+refusedID+"/deliveries", nil)
	if l := ds.([]any); len(l) != 4 || field(l[0], "status_code") != nil || field(l[0], "response_body") != nil || field(l[0], "error") == nil {
		t.Errorf("refused deliveries = %v", ds)
	}
}

// TestOutboxSurvivesRestart commits a change on an instance without a
// delivery loop (the crash window between commit and delivery), stops it,
// and starts another instance on the same database, which delivers.
func TestOutboxSurvivesRestart(t *testing.T) {
	t.Parallel()
	first := apptest.Start(t, nil, fastWorkers(app.WithoutDelivery())...)
	_, token := first.User(t, "admin@example.com", "admin")
	_, envs := first.DefaultProject(t)
	fe := &flagEnv{s: first, token: token, envs: map[string]string{"production": envs["production"].String()}}
	hook := newReceiver(t, nil)
	fe.call(t, "POST", fe.env("production")+"/webhooks", map[string]any{"name": "h", "url": hook.URL, "secret": "k"})
	if status, body := fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "durable", "is_enabled": true}); status != 200 {
		t.Fatalf("create = %d %v", status, body)
	}
	if n := fe.count(t, `SELECT count(*) FROM notification_outbox`); n != 1 {
		t.Fatalf("outbox holds %d rows after the commit, want 1", n)
	}
	first.Stop()
	if n := len(hook.requests()); n != 0 {
		t.Fatalf("delivered %d times without a delivery loop", n)
	}

	second := apptest.Start(t, map[string]string{"DATABASE_URL": first.DBURL}, fastWorkers()...)
	waitFor(t, "the delivery after the restart", func() bool { return len(hook.requests()) == 1 })
	got := hook.requests()[0]
	if got.header.Get("X-Service-Event") != "flag.created" || !verifySignature("k", got.body, got.header.Get("X-Service-Signature")) {
		t.Errorf("delivery after restart: %v %s", got.header, got.body)
	}
	fe2 := &flagEnv{s: second}
	waitFor(t, "the outbox to drain", func() bool { return fe2.count(t, `SELECT count(*) FROM notification_outbox`) == 0 })
}
