package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

type flagStatus struct {
	FlagKey         string     `json:"flag_key"`
	Status          string     `json:"status"`
	LastEvaluatedAt *time.Time `json:"last_evaluated_at"`
	Evaluations7d   int64      `json:"evaluations_7d"`
	Values7d        []struct {
		Value string `json:"value"`
		Count int64  `json:"count"`
	} `json:"values_7d"`
}

func (me *measEnv) statuses(t *testing.T) map[string]flagStatus {
	t.Helper()
	status, raw := me.call(t, "GET", me.path("/flag-status"), nil)
	if status != http.StatusOK {
		t.Fatalf("flag-status = %d %v", status, raw)
	}
	var list []flagStatus
	decode(t, raw, &list)
	out := map[string]flagStatus{}
	for i, s := range list {
		if i > 0 && list[i-1].FlagKey >= s.FlagKey {
			t.Errorf("not ordered by key: %q before %q", list[i-1].FlagKey, s.FlagKey)
		}
		out[s.FlagKey] = s
	}
	return out
}

func (me *measEnv) mustCreateFlag(t *testing.T, key string) {
	t.Helper()
	if st, b := me.call(t, "POST", me.path("/flags"), map[string]any{"key": key, "is_enabled": true}); st != http.StatusCreated && st != http.StatusOK {
		t.Fatalf("create %s = %d %v", key, st, b)
	}
}

func values(s flagStatus) map[string]int64 {
	out := map[string]int64{}
	for _, v := range s.Values7d {
		out[v.Value] = v.Count
	}
	return out
}

// docs/reference/measurement.md, Flag status, on a server whose clock reads a
// little over 8 days after the flags were created: launched, active and
// inactive, and a window of exactly 168 hours whose first, partial hour is
// counted from the raw rows.
func TestFlagStatusWindowAndStatuses(t *testing.T) {
	t.Parallel()
	// Off the hour, so the window starts inside an hour.
	now := time.Now().UTC().Add(8 * 24 * time.Hour).Truncate(time.Hour).Add(30*time.Minute + 17*time.Second)
	me := newMeasEnvAt(t, now)
	for _, k := range []string{"edge", "launched", "mixed", "sleeping", "unused", "archived"} {
		me.mustCreateFlag(t, k)
	}
	if st, b := me.call(t, "POST", me.path("/flags/archived/archive"), nil); st != http.StatusOK {
		t.Fatalf("archive = %d %v", st, b)
	}
	since := now.Add(-168 * time.Hour)
	nextHour := since.Truncate(time.Hour).Add(time.Hour)
	me.mustPost(t, "/impressions", []any{
		imp("edge", "u1", "a", since.Add(-time.Second)),    // just outside
		imp("edge", "u1", "a", since),                      // the first instant inside
		imp("edge", "u2", "a", nextHour.Add(-time.Second)), // the partial hour's last second
		imp("edge", "u2", "a", nextHour),                   // the first full hour
		imp("edge", "u3", "a", now.Add(-2*time.Hour)),
		imp("launched", "u1", "true", now.Add(-time.Hour)),
		imp("launched", "", "true", now.Add(-3*24*time.Hour)),
		imp("mixed", "u1", "red", now.Add(-time.Hour)),
		imp("mixed", "u2", "blue", now.Add(-5*24*time.Hour)),
		imp("sleeping", "u1", "on", now.Add(-10*24*time.Hour)),
		imp("archived", "u1", "x", now.Add(-time.Minute)),
	})
	me.mustPost(t, "/impressions/summaries", []any{
		summary("edge", "b", 2, since.Add(-time.Hour), since),                           // ends at the first instant inside
		summary("edge", "b", 5, since.Add(-time.Hour), since.Add(-time.Microsecond)),    // ends just before
		summary("edge", "b", 3, nextHour.Add(-time.Minute), nextHour.Add(-time.Second)), // in the partial hour
		summary("launched", "true", 40, now.Add(-2*time.Hour), now.Add(-90*time.Minute)),
	})

	got := me.statuses(t)
	if len(got) != 6 {
		t.Fatalf("got %d entries, want the 6 flags (archived included): %v", len(got), got)
	}
	edge := got["edge"]
	if edge.Status != "active" || edge.Evaluations7d != 4+5 || !cmp.Equal(values(edge), map[string]int64{"a": 4, "b": 5}) ||
		edge.LastEvaluatedAt == nil || !edge.LastEvaluatedAt.Equal(now.Add(-2*time.Hour)) {
		t.Errorf("edge = %+v (want 4 impressions of a and 2 + 3 summarised b in the window)", edge)
	}
	if l := got["launched"]; l.Status != "launched" || l.Evaluations7d != 42 || !cmp.Equal(values(l), map[string]int64{"true": 42}) {
		t.Errorf("launched = %+v", l)
	}
	if m := got["mixed"]; m.Status != "active" || m.Evaluations7d != 2 {
		t.Errorf("mixed = %+v", m)
	}
	if s := got["sleeping"]; s.Status != "inactive" || s.Evaluations7d != 0 || len(s.Values7d) != 0 ||
		s.LastEvaluatedAt == nil || !s.LastEvaluatedAt.Equal(now.Add(-10*24*time.Hour)) {
		t.Errorf("sleeping = %+v", s)
	}
	if u := got["unused"]; u.Status != "inactive" || u.LastEvaluatedAt != nil || u.Values7d == nil {
		t.Errorf("unused (created 8 days ago, never evaluated) = %+v", u)
	}
	if a := got["archived"]; a.Status != "launched" || a.Evaluations7d != 1 {
		t.Errorf("archived = %+v: archived flags have a status too (archived 8 days ago)", a)
	}

	// Who may read it: whoever reads the flags; client keys may not.
	project := uuid.MustParse(me.project)
	client := newKindKey(t, me.s, me.token, project, uuid.MustParse(me.envs["production"]), "client")
	if st, b := me.call(t, "GET", me.path("/flag-status"), nil, client.Key); st != http.StatusForbidden {
		t.Errorf("client key = %d %v, want 403", st, b)
	}
}

// A flag created within the last 7 days is new until its first evaluation,
// and a change within the window keeps a one-valued flag active.
func TestFlagStatusNewAndChanged(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Add(time.Minute)
	me := newMeasEnvAt(t, now)
	for _, k := range []string{"fresh", "tried", "reused"} {
		me.mustCreateFlag(t, k)
	}
	me.mustPost(t, "/impressions", []any{
		imp("tried", "u1", "true", now.Add(-time.Second)),
		// Evaluations count whatever their date relative to the flag's creation.
		imp("reused", "u1", "true", now.Add(-9*24*time.Hour)),
	})
	got := me.statuses(t)
	if s := got["fresh"]; s.Status != "new" || s.LastEvaluatedAt != nil {
		t.Errorf("fresh = %+v", s)
	}
	if s := got["tried"]; s.Status != "active" || s.Evaluations7d != 1 {
		t.Errorf("tried = %+v: created within the window, so changed within it", s)
	}
	if s := got["reused"]; s.Status != "inactive" {
		t.Errorf("reused = %+v: evaluated before, so not new", s)
	}
	me.mustPost(t, "/impressions/summaries", []any{summary("fresh", "false", 1, now.Add(-time.Minute), now.Add(-time.Minute))})
	if s := me.statuses(t)["fresh"]; s.Status != "active" || s.Evaluations7d != 1 {
		t.Errorf("fresh after a summary = %+v", s)
	}
}
