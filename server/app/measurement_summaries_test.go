package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// summary is one evaluation summary for a batch.
func summary(flag, value string, count int, start, end time.Time) map[string]any {
	return map[string]any{"flag_key": flag, "value": value, "count": count,
		"start": start.Format(time.RFC3339Nano), "end": end.Format(time.RFC3339Nano)}
}

// docs/reference/measurement.md, Summaries: summaries count wherever
// evaluations are counted (stats, exposure and its timeline), at their end, and
// nowhere users are (unique users, first exposures, experiments, the impression
// list).
func TestSummariesCountWhereEvaluationsCount(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	me.mustPost(t, "/impressions", []any{
		imp("f", "u1", "true", t0.Add(-3*time.Hour)),
		imp("f", "u1", "true", t0.Add(-2*time.Hour)),
		imp("f", "u2", "false", t0.Add(-2*time.Hour)),
	})
	me.mustPost(t, "/events", []any{goal("buy", "u2", t0.Add(-time.Hour))})
	me.experiment(t, "exp", "f", "buy", "true")
	before := me.results(t, "exp")

	yesterday := t0.Add(-26 * time.Hour)
	me.mustPost(t, "/impressions/summaries", []any{
		summary("f", "true", 5, t0.Add(-2*time.Hour), t0.Add(-time.Hour)),         // the latest evaluation of f
		summary("f", "false", 3, yesterday.Add(-time.Hour), yesterday),            // counts on yesterday's day
		summary("g", "x", 4, t0.Add(-50*time.Minute), t0.Add(-40*time.Minute)),    // a flag seen only in summaries
		summary("f", "true", 1, t0.Add(-90*time.Minute), t0.Add(-90*time.Minute)), // start = end
	})
	// Rows that break a rule are skipped; the rest of the batch counts.
	start, end := t0.Add(-2*time.Hour).Format(time.RFC3339), t0.Add(-time.Hour).Format(time.RFC3339)
	row := func(changes map[string]any) map[string]any {
		r := map[string]any{"flag_key": "f", "value": "true", "count": 1, "start": start, "end": end}
		for k, v := range changes {
			if v == nil {
				delete(r, k)
			} else {
				r[k] = v
			}
		}
		return r
	}
	status, body := me.call(t, "POST", me.path("/impressions/summaries"), []any{
		1, "row", nil, []any{}, true,
		row(map[string]any{"flag_key": nil}), row(map[string]any{"value": nil}), row(map[string]any{"count": nil}),
		row(map[string]any{"start": nil}), row(map[string]any{"end": nil}),
		row(map[string]any{"flag_key": "a b"}), row(map[string]any{"flag_key": ""}), row(map[string]any{"flag_key": strings.Repeat("k", 101)}),
		row(map[string]any{"value": 5}), row(map[string]any{"value": true}),
		row(map[string]any{"count": 0}), row(map[string]any{"count": -2}), row(map[string]any{"count": 1.5}),
		row(map[string]any{"count": "3"}), row(map[string]any{"count": 1e30}),
		row(map[string]any{"start": "yesterday"}), row(map[string]any{"end": "2026-03-10"}), row(map[string]any{"end": 5}),
		row(map[string]any{"start": end, "end": start}), // start after end
		row(map[string]any{"count": 2}),                 // the one good row
	})
	if status != http.StatusNoContent {
		t.Fatalf("mixed batch = %d %v", status, body)
	}
	// Raw bodies the map encoder cannot write: an exponent, a fraction of
	// zero, an integer beyond int64.
	for _, count := range []string{"1e2", "2.0", "99999999999999999999"} {
		raw := fmt.Sprintf(`[{"flag_key":"f","value":"true","count":%s,"start":%q,"end":%q}]`, count, start, end)
		st, b, _ := me.s.Do(t, apptest.Request{Method: "POST", Path: me.path("/impressions/summaries"), Bearer: me.token, Body: []byte(raw)})
		if st != http.StatusNoContent {
			t.Fatalf("count %s = %d %s", count, st, b)
		}
	}

	_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
	var stats []statsEntry
	decode(t, raw, &stats)
	want := []statsEntry{
		{FlagKey: "f", Total: 3 + 5 + 3 + 1 + 2, TrueCount: 2 + 5 + 1 + 2, FalseCount: 1 + 3, UniqueUsers: 2, LastSeen: t0.Add(-time.Hour)},
		{FlagKey: "g", Total: 4, UniqueUsers: 0, LastSeen: t0.Add(-40 * time.Minute)},
	}
	if d := cmp.Diff(want, stats); d != "" {
		t.Errorf("stats (-want +got):\n%s", d)
	}

	_, raw = me.call(t, "GET", me.path("/impressions/exposure?flag_key=f&days=2"), nil)
	var exp exposure
	decode(t, raw, &exp)
	if exp.TotalImpressions != 14 || exp.TotalUsers != 2 || len(exp.Variants) != 2 ||
		exp.Variants[0].Value != "false" || exp.Variants[0].Impressions != 4 || exp.Variants[0].UniqueUsers != 1 ||
		exp.Variants[1].Value != "true" || exp.Variants[1].Impressions != 10 || exp.Variants[1].UniqueUsers != 1 {
		t.Errorf("exposure of f = %+v", exp)
	}
	today, yday := t0.Format("2006-01-02"), yesterday.Format("2006-01-02")
	type day struct {
		Day, Value string
		Count      int64
	}
	var timeline []day
	for _, d := range exp.Timeline {
		timeline = append(timeline, day{d.Day[:10], d.Value, d.Count})
	}
	wantTimeline := []day{{yday, "false", 3}, {today, "false", 1}, {today, "true", 10}}
	if d := cmp.Diff(wantTimeline, timeline); d != "" {
		t.Errorf("timeline (-want +got):\n%s", d)
	}
	_, raw = me.call(t, "GET", me.path("/impressions/exposure?flag_key=g"), nil)
	decode(t, raw, &exp)
	if exp.TotalImpressions != 4 || exp.TotalUsers != 0 || len(exp.Variants) != 1 || exp.Variants[0].UniqueUsers != 0 {
		t.Errorf("exposure of g = %+v", exp)
	}

	if l := me.list(t, ""); l.Total != 3 || len(l.Items) != 3 {
		t.Errorf("impression list: total %d, %d items; summaries are not impressions", l.Total, len(l.Items))
	}
	if after := me.results(t, "exp"); !cmp.Equal(before, after) {
		t.Errorf("experiment results changed with summaries:\nbefore %+v\nafter  %+v", before, after)
	}
}

// The summaries route's limits and credentials: 413 over 500 rows, 400 for a
// body that is not an array, client keys welcome (from any origin), keys of
// another environment 404.
func TestSummariesRouteLimitsAndKeys(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	path := me.path("/impressions/summaries")
	at := t0.Add(-time.Minute)
	rows := make([]any, 501)
	for i := range rows {
		rows[i] = summary("f", "true", 1, at, at)
	}
	if st, b := me.call(t, "POST", path, rows); st != http.StatusRequestEntityTooLarge {
		t.Errorf("501 rows = %d %v, want 413", st, b)
	}
	if st, b := me.call(t, "POST", path, rows[:500]); st != http.StatusNoContent {
		t.Errorf("500 rows = %d %v, want 204", st, b)
	}
	for _, bad := range []any{map[string]any{"flag_key": "f"}, "rows", 3} {
		if st, b := me.call(t, "POST", path, bad); st != http.StatusBadRequest || field(b, "error") == nil {
			t.Errorf("body %v = %d %v, want 400 with an error", bad, st, b)
		}
	}

	project := uuid.MustParse(me.project)
	prod, staging := uuid.MustParse(me.envs["production"]), uuid.MustParse(me.envs["staging"])
	client := newKindKey(t, me.s, me.token, project, prod, "client")
	st, _, hdr := me.s.Do(t, apptest.Request{Method: "POST", Path: path, Bearer: client.Key,
		Body: []any{summary("f", "true", 7, at, at)}, Header: map[string]string{"Origin": "https://shop.example"}})
	if st != http.StatusNoContent || hdr.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("client key = %d, Access-Control-Allow-Origin %q", st, hdr.Header.Get("Access-Control-Allow-Origin"))
	}
	other := newKindKey(t, me.s, me.token, project, staging, "client")
	if st, b := me.call(t, "POST", path, []any{summary("f", "true", 1, at, at)}, other.Key); st != http.StatusNotFound {
		t.Errorf("another environment's key = %d %v, want 404", st, b)
	}

	_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
	var stats []statsEntry
	decode(t, raw, &stats)
	if len(stats) != 1 || stats[0].Total != 507 {
		t.Errorf("stats = %+v, want 500 + 7 evaluations of f", stats)
	}
}
