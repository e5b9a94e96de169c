package app_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/measure"
)

// arrival is one impression or goal event as the test sends it.
type arrival struct {
	goal        bool
	user, value string // value: the variant, or the goal's key
	at          time.Time
}

// referenceResult counts an experiment's arms from the raw records, the
// definition written out (docs/reference/measurement.md, Attribution): a
// user enters at their earliest impression of the flag still kept (after
// cutoff) and stays in its variant; anonymous impressions do not count; a
// user converted when a goal of the key occurred at or after that entry.
func referenceResult(rows []arrival, goalKey string, cutoff time.Time) map[string][2]int64 {
	type entry struct {
		at      time.Time
		variant string
	}
	first := map[string]entry{}
	for _, r := range rows {
		if r.goal || r.user == "" || r.at.Before(cutoff) {
			continue
		}
		if e, ok := first[r.user]; !ok || r.at.Before(e.at) {
			first[r.user] = entry{r.at, r.value}
		}
	}
	converted := map[string]bool{}
	for _, r := range rows {
		if !r.goal || r.value != goalKey || r.at.Before(cutoff) {
			continue
		}
		if e, ok := first[r.user]; ok && !r.at.Before(e.at) {
			converted[r.user] = true
		}
	}
	out := map[string][2]int64{}
	for u, e := range first {
		c := out[e.variant]
		c[0]++
		if converted[u] {
			c[1]++
		}
		out[e.variant] = c
	}
	return out
}

// Experiment results are exact whatever order the records arrive in:
// impressions earlier than ones already ingested (which move a user to
// another arm, and may make a goal count or stop counting), duplicates,
// goals before and after the exposure they follow, anonymous impressions,
// other goal keys, the background fold in between, experiments created and
// changed after their data arrived, and finally retention. Every so many
// batches, through the real ingest routes, the results equal the reference
// computed from everything sent so far: read from the counts the fold
// keeps, and computed from every user as while those are being built.
func TestExperimentResultsExactInAnyArrivalOrder(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name, source string
		opts         []app.Option
	}{
		{"kept counts", "maintained", nil},
		{"recomputed while counts are built", "recomputed", []app.Option{app.WithoutExperimentCounts()}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			resultsInAnyArrivalOrder(t, mode.source, mode.opts...)
		})
	}
}

func resultsInAnyArrivalOrder(t *testing.T, source string, opts ...app.Option) {
	// A folder that folds whenever ingest pauses for 20 ms, or 50 rows
	// wait: the checks below read rollups and unfolded rows in every mix.
	me := newMeasEnvWith(t, t0, nil, append(opts,
		app.WithRollupFolder(measure.FolderConfig{Interval: 20 * time.Millisecond, MaxBacklog: 50}),
		app.WithWorkerInterval(20*time.Millisecond))...)
	if st, b := me.call(t, "POST", me.flags("production"), map[string]any{
		"key": "exp", "is_enabled": true, "flag_type": "string", "default_value": "A",
		"variants": []any{map[string]any{"value": "A", "weight": 1}, map[string]any{"value": "B", "weight": 1}, map[string]any{"value": "C", "weight": 1}},
	}); st != 200 {
		t.Fatalf("create flag = %d %v", st, b)
	}
	// The experiments and the goal key each measures now.
	goals := map[string]string{"e": "buy"}
	me.experiment(t, "e", "exp", "buy", "A")
	settled := func(key string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for _, from := me.resultsFrom(t, key); from != source; _, from = me.resultsFrom(t, key) {
			if time.Now().After(deadline) {
				t.Fatalf("results of %s never came from the %s counts", key, source)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	settled("e")

	rng := rand.New(rand.NewPCG(33, 2026))
	var rows []arrival
	tick := 0
	at := func(daysAgo float64) time.Time {
		tick++ // every record its own microsecond: no ties for a first exposure
		return t0.Add(-time.Duration(daysAgo * float64(24*time.Hour))).Truncate(time.Second).Add(time.Duration(tick) * time.Microsecond)
	}
	for u := range 300 {
		user := fmt.Sprintf("u%d", u)
		var seen []arrival
		for range 1 + rng.IntN(4) {
			r := arrival{user: user, value: []string{"A", "B", "C"}[rng.IntN(3)], at: at(rng.Float64() * 120)}
			rows, seen = append(rows, r), append(seen, r)
			if rng.IntN(5) == 0 {
				rows = append(rows, r) // sent twice
			}
		}
		for range rng.IntN(5) {
			// Around the user's impressions: before, between and after.
			base := seen[rng.IntN(len(seen))].at
			rows = append(rows, arrival{goal: true, user: user, value: []string{"buy", "buy", "other"}[rng.IntN(3)],
				at: base.Add(time.Duration(rng.IntN(96)-48) * time.Hour).Truncate(time.Second).Add(time.Duration(tick) * time.Microsecond)})
			tick++
		}
		if rng.IntN(10) == 0 {
			rows = append(rows, arrival{goal: true, user: user, value: "elsewhere", at: at(rng.Float64() * 100)})
		}
	}
	for range 20 {
		rows = append(rows, arrival{value: "B", at: at(rng.Float64() * 100)}) // anonymous
	}
	for i, r := range rows {
		if r.at.After(t0) {
			rows[i].at = t0.Add(-time.Duration(i+1) * time.Microsecond)
		}
	}
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })

	check := func(sent []arrival, cutoff time.Time, when string) {
		t.Helper()
		for key, goalKey := range goals {
			want := referenceResult(sent, goalKey, cutoff)
			got := map[string][2]int64{}
			res, from := me.resultsFrom(t, key)
			if key == "e" && from != source {
				t.Errorf("%s: results of e from %q, want %q", when, from, source)
			}
			var exposed, converted int64
			for _, v := range res.Variants {
				got[v.Variant] = [2]int64{v.Exposed, v.Converted}
				exposed, converted = exposed+v.Exposed, converted+v.Converted
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%s: %s's arms (exposed, converted) (-reference +results, %s):\n%s", when, key, from, d)
			}
			if res.TotalExposed != exposed || res.TotalConverted != converted {
				t.Errorf("%s: %s's totals %d/%d, arms sum to %d/%d", when, key, res.TotalExposed, res.TotalConverted, exposed, converted)
			}
		}
	}
	var sent []arrival
	for batch := 0; len(sent) < len(rows); batch++ {
		n := min(len(rows)-len(sent), 1+rng.IntN(60))
		var imps, events []any
		for _, r := range rows[len(sent) : len(sent)+n] {
			if r.goal {
				events = append(events, goal(r.value, r.user, r.at))
			} else {
				imps = append(imps, imp("exp", r.user, r.value, r.at))
			}
		}
		if len(imps) > 0 {
			me.mustPost(t, "/impressions", imps)
		}
		if len(events) > 0 {
			me.mustPost(t, "/events", events)
		}
		half := len(sent) < len(rows)/2 && len(sent)+n >= len(rows)/2
		threeQuarters := len(sent) < len(rows)*3/4 && len(sent)+n >= len(rows)*3/4
		sent = rows[:len(sent)+n]
		switch {
		case half: // an experiment of a goal key no experiment measured, after its data
			me.experiment(t, "late", "exp", "other", nil)
			goals["late"] = "other"
		case threeQuarters: // it moves to the first one's key; then another takes its old one
			if st, b := me.call(t, "PATCH", me.path("/experiments/late"), map[string]any{"goal_event_key": "buy"}); st != 200 {
				t.Fatalf("patch late = %d %v", st, b)
			}
			goals["late"] = "buy"
			if n := me.count(t, `SELECT count(*) FROM experiment_metrics`); n != 1 {
				t.Errorf("%d experiment metrics kept, want 1: no experiment measures other now", n)
			}
			me.experiment(t, "last", "exp", "other", "B")
			goals["last"] = "other"
		}
		if batch%7 == 3 {
			time.Sleep(60 * time.Millisecond) // ingest pauses: the folder folds
		}
		if batch%5 == 0 {
			check(sent, time.Time{}, fmt.Sprintf("after batch %d (%d records)", batch, len(sent)))
		}
	}
	check(rows, time.Time{}, "everything sent")
	for key := range goals {
		settled(key)
	}
	check(rows, time.Time{}, "everything sent, every experiment's counts built")

	// Retention: 90 days, from a UTC midnight.
	pool, err := pgxpool.New(t.Context(), me.s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var folded int64
	if err := pool.QueryRow(t.Context(), `SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions'`).Scan(&folded); err != nil {
		t.Fatal(err)
	}
	if folded == 0 {
		t.Fatal("the folder never folded: the checks read unfolded rows only")
	}
	res, err := measure.New(pool, measure.Config{Now: me.clock.Now}).PurgeExpired(t.Context(), measure.RetentionConfig{Days: 90, BatchSize: 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.Impressions == 0 || res.GoalEvents == 0 || res.UsersRefreshed == 0 || res.GoalEventUsers == 0 {
		t.Fatalf("retention purged %+v; the test means it to purge some of each", res)
	}
	check(rows, res.Cutoff, "after retention")
}
