package app_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type impressionItem struct {
	ID          int64          `json:"id"`
	FlagKey     string         `json:"flag_key"`
	UserID      *string        `json:"user_id"`
	Value       string         `json:"value"`
	Context     map[string]any `json:"context"`
	EvaluatedAt time.Time      `json:"evaluated_at"`
}

type impressionList struct {
	Items []impressionItem `json:"items"`
	Total int64            `json:"total"`
}

func (me *measEnv) list(t *testing.T, query string) impressionList {
	t.Helper()
	status, raw := me.call(t, "GET", me.path("/impressions"+query), nil)
	if status != 200 {
		t.Fatalf("list %s = %d %v", query, status, raw)
	}
	var out impressionList
	decode(t, raw, &out)
	return out
}

func ids(l impressionList) []int64 {
	out := []int64{}
	for _, it := range l.Items {
		out = append(out, it.ID)
	}
	return out
}

func TestImpressionList(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	// 250 impressions: flag a (u1 true, u2 false alternating), then flag b.
	var batch []any
	for i := range 200 {
		user, value := "u1", "true"
		if i%2 == 1 {
			user, value = "u2", "false"
		}
		batch = append(batch, imp("a", user, value, t0.Add(-time.Duration(i)*time.Minute)))
	}
	me.mustPost(t, "/impressions", batch)
	batch = batch[:0]
	for range 50 {
		batch = append(batch, imp("b", "", "blue", t0))
	}
	batch[0] = map[string]any{"flag_key": "b", "value": "green", "user_id": "u1", "context": map[string]any{"plan": "pro", "age": 30}}
	me.mustPost(t, "/impressions", batch)

	all := me.list(t, "")
	if all.Total != 250 || len(all.Items) != 50 {
		t.Fatalf("default page: total %d, %d items; want 250, 50 (default limit)", all.Total, len(all.Items))
	}
	for i := 1; i < len(all.Items); i++ {
		if all.Items[i].ID >= all.Items[i-1].ID {
			t.Fatalf("not newest first: %v", ids(all))
		}
	}
	newest := all.Items[0].ID
	oldest := newest - 249

	// The one with a context and no evaluated_at: the receive time (t0).
	var green impressionItem
	for _, it := range me.list(t, "?value=green").Items {
		green = it
	}
	wantGreen := impressionItem{ID: green.ID, FlagKey: "b", UserID: ptrTo("u1"), Value: "green", Context: map[string]any{"plan": "pro", "age": float64(30)}, EvaluatedAt: t0}
	if d := cmp.Diff(wantGreen, green); d != "" {
		t.Errorf("impression with context (-want +got):\n%s", d)
	}
	if it := all.Items[0]; it.UserID != nil || it.Context != nil {
		t.Errorf("anonymous impression = %+v, want null user_id and context", it)
	}

	for _, tt := range []struct {
		name      string
		query     string
		wantTotal int64
		wantIDs   []int64 // nil: only check the count
		wantCount int
	}{
		{name: "limit 0 clamps to 1", query: "?limit=0", wantTotal: 250, wantCount: 1},
		{name: "negative limit clamps to 1", query: "?limit=-5", wantTotal: 250, wantCount: 1},
		{name: "limit 1000 clamps to 200", query: "?limit=1000", wantTotal: 250, wantCount: 200},
		{name: "limit 200", query: "?limit=200", wantTotal: 250, wantCount: 200},
		{name: "offset", query: "?limit=3&offset=248", wantTotal: 250, wantIDs: []int64{oldest + 1, oldest}},
		{name: "negative offset is 0", query: "?limit=1&offset=-3", wantTotal: 250, wantIDs: []int64{newest}},
		{name: "since_id ignores offset, total ignores since_id", query: fmt.Sprintf("?since_id=%d&offset=100", newest-3), wantTotal: 250,
			wantIDs: []int64{newest, newest - 1, newest - 2}},
		{name: "since_id with filters", query: fmt.Sprintf("?flag_key=a&since_id=%d", oldest+196), wantTotal: 200,
			wantIDs: []int64{oldest + 199, oldest + 198, oldest + 197}},
		{name: "since_id at the newest", query: fmt.Sprintf("?since_id=%d", newest), wantTotal: 250, wantIDs: []int64{}},
		{name: "flag filter", query: "?flag_key=b&limit=200", wantTotal: 50, wantCount: 50},
		{name: "value filter", query: "?flag_key=a&value=false&limit=200", wantTotal: 100, wantCount: 100},
		{name: "user filter", query: "?user_id=u1&limit=200", wantTotal: 101, wantCount: 101},
		{name: "user and flag filter", query: "?user_id=u1&flag_key=b", wantTotal: 1, wantIDs: []int64{green.ID}},
		{name: "all filters", query: "?user_id=u2&flag_key=a&value=false&limit=2", wantTotal: 100, wantIDs: []int64{oldest + 199, oldest + 197}},
		{name: "no match", query: "?flag_key=zzz", wantTotal: 0, wantIDs: []int64{}},
	} {
		got := me.list(t, tt.query)
		if got.Total != tt.wantTotal {
			t.Errorf("%s: total = %d, want %d", tt.name, got.Total, tt.wantTotal)
		}
		if tt.wantIDs != nil {
			if d := cmp.Diff(tt.wantIDs, ids(got)); d != "" {
				t.Errorf("%s: ids (-want +got):\n%s", tt.name, d)
			}
		} else if len(got.Items) != tt.wantCount {
			t.Errorf("%s: %d items, want %d", tt.name, len(got.Items), tt.wantCount)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

type statsEntry struct {
	FlagKey     string    `json:"flag_key"`
	Total       int64     `json:"total"`
	TrueCount   int64     `json:"true_count"`
	FalseCount  int64     `json:"false_count"`
	UniqueUsers int64     `json:"unique_users"`
	LastSeen    time.Time `json:"last_seen"`
}

type exposure struct {
	FlagKey          string `json:"flag_key"`
	TotalImpressions int64  `json:"total_impressions"`
	TotalUsers       int64  `json:"total_users"`
	Variants         []struct {
		Value       string `json:"value"`
		Impressions int64  `json:"impressions"`
		UniqueUsers int64  `json:"unique_users"`
	} `json:"variants"`
	Timeline []struct {
		Day   string `json:"day"`
		Value string `json:"value"`
		Count int64  `json:"count"`
	} `json:"timeline"`
}

func TestImpressionStatsAndExposure(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	day := func(d int) time.Time { return t0.AddDate(0, 0, -d) } // d days ago, 12:00 UTC
	me.mustPost(t, "/impressions", []any{
		// Flag "banner": booleans over three UTC days.
		imp("banner", "u1", "true", day(0)),
		imp("banner", "u1", "true", day(0).Add(-time.Hour)),
		imp("banner", "u2", "false", day(1)),
		imp("banner", "u3", "true", day(1)),
		imp("banner", "", "true", day(1)),                               // anonymous
		imp("banner", "u2", "true", day(20)),                            // outside a 14-day timeline
		imp("banner", "u4", "false", t0.Truncate(24*time.Hour).Add(-1)), // 23:59:59.999999999 yesterday UTC
		// Flag "color": strings, no booleans.
		imp("color", "u1", "red", day(0).Add(-2*time.Hour)),
		imp("color", "u1", "blue", day(0).Add(-time.Hour)),
		imp("color", "u2", "red", day(2)),
	})
	// A second batch: counters and rollups add up across batches.
	me.mustPost(t, "/impressions", []any{imp("banner", "u1", "false", day(0).Add(-30*time.Minute))})

	_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
	var stats []statsEntry
	decode(t, raw, &stats)
	wantStats := []statsEntry{
		{FlagKey: "banner", Total: 8, TrueCount: 5, FalseCount: 3, UniqueUsers: 4, LastSeen: day(0)},
		{FlagKey: "color", Total: 3, TrueCount: 0, FalseCount: 0, UniqueUsers: 2, LastSeen: day(0).Add(-time.Hour)},
	}
	if d := cmp.Diff(wantStats, stats); d != "" {
		t.Errorf("stats (-want +got):\n%s", d)
	}

	_, raw = me.call(t, "GET", me.path("/impressions/exposure?flag_key=banner"), nil)
	var ex exposure
	decode(t, raw, &ex)
	type variant = struct {
		Value       string `json:"value"`
		Impressions int64  `json:"impressions"`
		UniqueUsers int64  `json:"unique_users"`
	}
	type dayCount = struct {
		Day   string `json:"day"`
		Value string `json:"value"`
		Count int64  `json:"count"`
	}
	want := exposure{
		FlagKey: "banner", TotalImpressions: 8, TotalUsers: 4,
		Variants: []variant{{"false", 3, 3}, {"true", 5, 3}},
		Timeline: []dayCount{
			{"2026-03-09", "false", 2}, {"2026-03-09", "true", 2},
			{"2026-03-10", "false", 1}, {"2026-03-10", "true", 2},
		},
	}
	if d := cmp.Diff(want, ex); d != "" {
		t.Errorf("exposure (-want +got):\n%s", d)
	}

	// days only changes the timeline; out-of-range values are clamped.
	for _, tt := range []struct {
		query    string
		wantDays []string
	}{
		{"&days=0", []string{"2026-03-10"}},
		{"&days=-4", []string{"2026-03-10"}},
		{"&days=1", []string{"2026-03-10"}},
		{"&days=2", []string{"2026-03-09", "2026-03-10"}},
		{"&days=21", []string{"2026-02-18", "2026-03-09", "2026-03-10"}},
		{"&days=1000", []string{"2026-02-18", "2026-03-09", "2026-03-10"}},
	} {
		_, raw := me.call(t, "GET", me.path("/impressions/exposure?flag_key=banner"+tt.query), nil)
		var got exposure
		decode(t, raw, &got)
		var days []string
		for _, d := range got.Timeline {
			if len(days) == 0 || days[len(days)-1] != d.Day {
				days = append(days, d.Day)
			}
		}
		if d := cmp.Diff(tt.wantDays, days); d != "" || got.TotalImpressions != 8 || len(got.Variants) != 2 {
			t.Errorf("%s: days (-want +got):\n%s totals %d %d", tt.query, d, got.TotalImpressions, len(got.Variants))
		}
	}
	// 90 days is the most: an impression 90 days ago is outside, 89 inside.
	me.mustPost(t, "/impressions", []any{imp("old", "u1", "x", day(90)), imp("old", "u1", "x", day(89))})
	_, raw = me.call(t, "GET", me.path("/impressions/exposure?flag_key=old&days=5000"), nil)
	decode(t, raw, &ex)
	if len(ex.Timeline) != 1 || ex.Timeline[0].Day != day(89).Format(time.DateOnly) || ex.TotalImpressions != 2 {
		t.Errorf("days clamped to 90: timeline %v, total %d", ex.Timeline, ex.TotalImpressions)
	}

	// A flag without impressions: zeros and empty lists.
	_, raw = me.call(t, "GET", me.path("/impressions/exposure?flag_key=none"), nil)
	if d := cmp.Diff(map[string]any{"flag_key": "none", "total_impressions": float64(0), "total_users": float64(0),
		"variants": []any{}, "timeline": []any{}}, raw); d != "" {
		t.Errorf("empty exposure (-want +got):\n%s", d)
	}

	for _, q := range []string{"", "?flag_key=", "?flag_key=" + strings.Repeat("f", 101), "?days=3"} {
		if status, body := me.call(t, "GET", me.path("/impressions/exposure"+q), nil); status != 422 || !detailsName(body, "flag_key") {
			t.Errorf("exposure %q = %d %v, want 422 naming flag_key", q, status, body)
		}
	}
	if status, _ := me.call(t, "GET", me.path("/impressions/exposure?flag_key="+strings.Repeat("f", 100)), nil); status != 200 {
		t.Errorf("100-character flag_key = %d, want 200", status)
	}
}
