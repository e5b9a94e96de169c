package app_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/measure"
)

func TestIngestBatchSize(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	batch := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = imp("big", "u", "true", t0)
		}
		return out
	}
	events := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = goal("buy", "u", t0)
		}
		return out
	}
	for _, tt := range []struct {
		name, rest string
		body       any
		want       int
	}{
		{"500 impressions", "/impressions", batch(500), 204},
		{"501 impressions", "/impressions", batch(501), 413},
		{"500 events", "/events", events(500), 204},
		{"501 events", "/events", events(501), 413},
		// The count stops at item 501: what follows is never parsed.
		{"501 items then garbage", "/impressions", `[` + strings.Repeat(`{"flag_key":"big","value":"true"},`, 501) + `not json`, 413},
		{"empty batch", "/impressions", []any{}, 204},
		{"not an array", "/impressions", map[string]any{"flag_key": "x", "value": "y"}, 400},
		{"malformed", "/events", `[{"event_key":`, 400},
		{"missing value", "/impressions", []any{map[string]any{"flag_key": "x"}}, 422},
	} {
		status, body := me.call(t, "POST", me.path(tt.rest), tt.body)
		if status != tt.want {
			t.Errorf("%s: status = %d %v, want %d", tt.name, status, body, tt.want)
		}
	}
	// Values up to the document's 10,000 characters, incompressible ones
	// included, fit the rollups' keys.
	huge := make([]byte, 5000)
	if _, err := rand.Read(huge); err != nil {
		t.Fatal(err)
	}
	me.mustPost(t, "/impressions", []any{imp("huge", "u1", hex.EncodeToString(huge), t0), imp("huge", "u2", hex.EncodeToString(huge), t0)})
	_, ex := me.call(t, "GET", me.path("/impressions/exposure?flag_key=huge"), nil)
	if vs, _ := field(ex, "variants").([]any); len(vs) != 1 || field(vs[0], "unique_users") != float64(2) {
		t.Errorf("exposure of a 10,000-character value = %v", ex)
	}

	// The refused batches stored nothing.
	_, list := me.call(t, "GET", me.path("/impressions?flag_key=big"), nil)
	if got := field(list, "total"); got != float64(500) {
		t.Errorf("total after ingest = %v, want 500", got)
	}
	_, keys := me.call(t, "GET", me.path("/events/keys"), nil)
	if ks, _ := keys.([]any); len(ks) != 1 || field(ks[0], "total") != float64(500) {
		t.Errorf("event keys = %v, want buy with 500", keys)
	}
}

func TestIngestAccess(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	prod, err := uuid.Parse(me.envs["production"])
	if err != nil {
		t.Fatal(err)
	}
	sdk := me.s.SDKKey(t, prod)
	viewerID, viewer := me.s.User(t, "viewer@example.com", "viewer")
	project, _ := me.s.DefaultProject(t)
	me.s.Member(t, project, viewerID, "viewer")
	_, outsider := me.s.User(t, "outsider@example.com", "editor")
	one := []any{imp("f", "u1", "true", t0)}
	oneEvent := []any{goal("buy", "u1", t0)}
	staging := "/api/environments/" + me.envs["staging"]

	for _, tt := range []struct {
		name, path, bearer string
		body               any
		want               int
	}{
		{"SDK key, its environment", me.path("/impressions"), sdk, one, 204},
		{"SDK key, its environment, events", me.path("/events"), sdk, oneEvent, 204},
		{"SDK key, another environment", staging + "/impressions", sdk, one, 404},
		{"SDK key, another environment, events", staging + "/events", sdk, oneEvent, 404},
		{"viewer may report", me.path("/impressions"), viewer, one, 204},
		{"non-member", me.path("/impressions"), outsider, one, 404},
		{"unknown environment", "/api/environments/" + uuid.NewString() + "/events", me.token, oneEvent, 404},
		{"SDK key reads its environment", me.path("/impressions/stats"), sdk, nil, 200},
	} {
		status, _, _ := me.s.Do(t, apptest.Request{Method: methodFor(tt.body), Path: tt.path, Bearer: tt.bearer, Body: tt.body})
		if status != tt.want {
			t.Errorf("%s: status = %d, want %d", tt.name, status, tt.want)
		}
	}
	if status, _, _ := me.s.Do(t, apptest.Request{Method: "POST", Path: me.path("/impressions"), Body: one}); status != 401 {
		t.Errorf("anonymous ingest = %d, want 401", status)
	}
}

func methodFor(body any) string {
	if body == nil {
		return "GET"
	}
	return "POST"
}

func TestGoalEventIngestRules(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	long := strings.Repeat("k", 101)
	accented := "z" + strings.Repeat("é", 99)
	me.mustPost(t, "/events", []any{
		goal("signup", "u1", t0.Add(-time.Hour)),
		goal("signup", "u2", t0.Add(-2*time.Hour)),
		goal("signup", "", t0.Add(-3*time.Hour)),               // anonymous: counted, no user
		goal("signup", "u1", t0.Add(24*time.Hour)),             // future: clamped to receive time (t0)
		map[string]any{"event_key": "signup", "user_id": "u3"}, // no occurred_at: receive time
		goal("", "u9", t0),                                     // empty key: skipped
		goal(long, "u9", t0),                                   // over 100 chars: skipped
		map[string]any{"user_id": "u9"},                        // no key: skipped
		goal(accented, "u4", t0.Add(-time.Minute)),             // 100 characters (199 bytes): kept
	})
	_, raw := me.call(t, "GET", me.path("/events/keys"), nil)
	var keys []eventKey
	decode(t, raw, &keys)
	want := []eventKey{
		{EventKey: "signup", Total: 5, UniqueUsers: 3, LastSeen: t0},
		{EventKey: accented, Total: 1, UniqueUsers: 1, LastSeen: t0.Add(-time.Minute)},
	}
	// Ordered by key.
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("event keys (-want +got):\n%s", d)
	}
	// The stored rows: the future time became the receive time.
	var maxAt time.Time
	err := me.s.DB(t).QueryRow(t.Context(), `SELECT max(occurred_at) FROM goal_events WHERE user_id = 'u1'`).Scan(&maxAt)
	if err != nil || !maxAt.Equal(t0) {
		t.Errorf("u1's latest occurred_at = %v (%v), want %v", maxAt, err, t0)
	}
	var n int
	if err := me.s.DB(t).QueryRow(t.Context(), `SELECT count(*) FROM goal_events WHERE user_id = 'u9'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("skipped rows stored: %d (%v)", n, err)
	}
}

type eventKey struct {
	EventKey    string    `json:"event_key"`
	Total       int64     `json:"total"`
	UniqueUsers int64     `json:"unique_users"`
	LastSeen    time.Time `json:"last_seen"`
}

// TestIngestMaxUnfolded drives INGEST_MAX_UNFOLDED through the server, with
// the background folder held off so that nothing shortens the tail: past
// the limit a batch waits for a fold that never comes and is taken after
// the gate's 5 s, counted as an overflow; at 0 nothing waits, even past the
// default's 25,000 rows.
func TestIngestMaxUnfolded(t *testing.T) {
	t.Parallel()
	idle := app.WithRollupFolder(measure.FolderConfig{Interval: time.Hour, MaxBacklog: 1 << 40})
	batch := func(from int) []map[string]any {
		out := make([]map[string]any, 500)
		for i := range out {
			out[i] = imp("f", fmt.Sprintf("u%d", from+i), "true", t0)
		}
		return out
	}
	for _, tt := range []struct {
		name, limit      string
		batches          int
		waits, overflows int
	}{
		{"past the limit a batch waits", "600", 2, 0, 1}, // waits counts the batches a fold let in
		{"0 is no limit", "0", 51, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			me := newMeasEnvWith(t, t0, map[string]string{"INGEST_MAX_UNFOLDED": tt.limit}, idle)
			for i := range tt.batches {
				me.mustPost(t, "/impressions", batch(i*500))
			}
			var page struct {
				Total int `json:"total"`
			}
			_, body := me.call(t, "GET", me.path("/impressions?limit=1"), nil)
			decode(t, body, &page)
			if want := tt.batches * 500; page.Total != want {
				t.Errorf("list total = %d, want %d", page.Total, want)
			}
			_, metrics := get(t, me.s.URL+"/metrics")
			for name, want := range map[string]int{
				"switchyard_ingest_gate_waits_total":     tt.waits,
				"switchyard_ingest_gate_overflows_total": tt.overflows,
			} {
				if got := metricValue(t, string(metrics), name); got != want {
					t.Errorf("%s = %d, want %d", name, got, want)
				}
			}
		})
	}
}

// TestIngestAnswersNoAccessBeforeTheGate: a caller without access to the
// environment is answered at once, not after waiting at a full gate.
func TestIngestAnswersNoAccessBeforeTheGate(t *testing.T) {
	t.Parallel()
	idle := app.WithRollupFolder(measure.FolderConfig{Interval: time.Hour, MaxBacklog: 1 << 40})
	me := newMeasEnvWith(t, t0, map[string]string{"INGEST_MAX_UNFOLDED": "600"}, idle)
	_, outsider := me.s.User(t, "outsider@example.com", "editor")
	batch := make([]map[string]any, 500)
	for i := range batch {
		batch[i] = imp("f", fmt.Sprintf("u%d", i), "true", t0)
	}
	me.mustPost(t, "/impressions", batch) // the tail is now 500 of 600
	for _, tt := range []struct{ name, path, bearer string }{
		{"non-member", me.path("/impressions"), outsider},
		{"unknown environment", "/api/environments/" + uuid.NewString() + "/impressions", me.token},
	} {
		if status, _, _ := me.s.Do(t, apptest.Request{Method: "POST", Path: tt.path, Bearer: tt.bearer, Body: batch}); status != 404 {
			t.Errorf("%s: status = %d, want 404", tt.name, status)
		}
	}
	// The gate was full: a batch with access waits, and is taken after 5 s.
	me.mustPost(t, "/impressions", batch)
	_, metrics := get(t, me.s.URL+"/metrics")
	if got := metricValue(t, string(metrics), "switchyard_ingest_gate_overflows_total"); got != 1 {
		t.Errorf("batches taken over the limit = %d, want 1 (only the last)", got)
	}
}

// metricValue is the value of an unlabelled counter in a /metrics page.
func metricValue(t *testing.T, page, name string) int {
	t.Helper()
	for line := range strings.Lines(page) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return n
		}
	}
	t.Fatalf("/metrics lacks %s", name)
	return 0
}
