package app_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// tally is what the test counts itself from the evaluations it makes: the
// figures every statistic must equal.
type tally struct {
	total     map[string]int64                       // flag -> evaluations
	values    map[string]map[string]int64            // flag -> value -> evaluations
	users     map[string]map[string]bool             // flag -> identified users
	valUsers  map[string]map[string]map[string]bool  // flag -> value -> users
	first     map[string]map[string]string           // flag -> user -> value of the first evaluation
	converted map[string]map[string]bool             // flag -> users with a goal event after their first exposure
	goals     map[string]int64                       // event key -> events
	goalUsers map[string]map[string]bool             // event key -> users
	days      map[string]map[string]map[string]int64 // flag -> UTC day -> value -> evaluations
}

func newTally() *tally {
	return &tally{total: map[string]int64{}, values: map[string]map[string]int64{}, users: map[string]map[string]bool{},
		valUsers: map[string]map[string]map[string]bool{}, first: map[string]map[string]string{},
		converted: map[string]map[string]bool{}, goals: map[string]int64{}, goalUsers: map[string]map[string]bool{},
		days: map[string]map[string]map[string]int64{}}
}

func (tl *tally) evaluation(flag, user, value string, day string) {
	tl.total[flag]++
	inc(tl.values, flag, value)
	if tl.days[flag] == nil {
		tl.days[flag] = map[string]map[string]int64{}
	}
	inc(tl.days[flag], day, value)
	if user == "" {
		return
	}
	set(tl.users, flag, user)
	if tl.valUsers[flag] == nil {
		tl.valUsers[flag] = map[string]map[string]bool{}
	}
	set(tl.valUsers[flag], value, user)
	if tl.first[flag] == nil {
		tl.first[flag] = map[string]string{}
	}
	if _, ok := tl.first[flag][user]; !ok {
		tl.first[flag][user] = value
	}
}

func inc[K comparable](m map[string]map[K]int64, a string, b K) {
	if m[a] == nil {
		m[a] = map[K]int64{}
	}
	m[a][b]++
}

func set(m map[string]map[string]bool, a, b string) {
	if m[a] == nil {
		m[a] = map[string]bool{}
	}
	m[a][b] = true
}

// Exactness (docs/reference/measurement.md, Reporting once): the real Go SDK,
// reporting each evaluation once (an impression for a (flag, user, value) it
// does not remember, a summary count otherwise, with a memory small enough to
// forget), against a real server; stats, exposure (variants and timeline),
// event keys and experiment results equal the figures counted from the
// evaluations themselves, to the unit.
func TestMeasurementIsExactWithTheSDK(t *testing.T) {
	t.Parallel()
	me := &measEnv{flagEnv: newFlagEnv(t)} // the real clock: the SDK stamps its reports
	prod := uuid.MustParse(me.envs["production"])
	flags := me.flags("production")
	variants := func(ws map[string]int) []any {
		var out []any
		for v, w := range ws {
			out = append(out, map[string]any{"value": v, "weight": w})
		}
		return out
	}
	for _, f := range []map[string]any{
		{"key": "exp-color", "is_enabled": true, "flag_type": "string", "default_value": "none",
			"variants": variants(map[string]int{"red": 1, "green": 1, "blue": 2})},
		{"key": "exp-layout", "is_enabled": true, "flag_type": "string", "default_value": "none",
			"variants": variants(map[string]int{"grid": 1, "list": 1})},
		{"key": "banner", "is_enabled": true, "rollout_percentage": 50},
		// The same user gets either value, by attribute: several values per user.
		{"key": "tier", "is_enabled": true, "flag_type": "string", "default_value": "basic",
			"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"pro"}, "variant": "gold"}}},
	} {
		if st, b := me.call(t, "POST", flags, f); st != http.StatusOK && st != http.StatusCreated {
			t.Fatalf("create %v = %d %v", f["key"], st, b)
		}
	}
	me.experiment(t, "colors", "exp-color", "purchase", nil)
	me.experiment(t, "layouts", "exp-layout", "purchase", nil)

	client, err := sdkgo.New(context.Background(), me.s.SDKKey(t, prod), sdkgo.WithBaseURL(me.s.URL),
		sdkgo.WithEvents(20*time.Millisecond, 100_000), sdkgo.WithExposureMemory(700))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())

	tl := newTally()
	rng := rand.New(rand.NewPCG(17, 2026))
	const population = 3000
	zipf := rand.NewZipf(rng, 1.1, 1, population-1) // user 0 evaluates thousands of times
	// Goal events before any exposure never convert.
	for u := 0; u < 50; u++ {
		user := fmt.Sprintf("u%d", u)
		client.Track(user, "purchase", 1)
		tl.goals["purchase"]++
		set(tl.goalUsers, "purchase", user)
	}
	time.Sleep(5 * time.Millisecond) // every exposure below is strictly later
	startDay := time.Now().UTC().Format("2006-01-02")
	for step := 0; step < 12_000; step++ {
		user := fmt.Sprintf("u%d", zipf.Uint64())
		if rng.IntN(20) == 0 {
			user = "" // anonymous
		}
		plan := []string{"pro", "free"}[rng.IntN(2)]
		day := time.Now().UTC().Format("2006-01-02")
		for _, flag := range []string{"exp-color", "exp-layout", "banner", "tier"} {
			d := client.Detail(flag, user, map[string]any{"plan": plan})
			tl.evaluation(flag, user, eval.RenderValue(d.Value), day)
		}
		// Some exposed users buy or sign up; they saw both experiment flags
		// in this very step, so the event is at or after their first exposure.
		if user != "" && rng.IntN(10) == 0 {
			key := []string{"purchase", "signup"}[rng.IntN(2)]
			client.Track(user, key, 1)
			tl.goals[key]++
			set(tl.goalUsers, key, user)
			if key == "purchase" {
				set(tl.converted, "exp-color", user)
				set(tl.converted, "exp-layout", user)
			}
		}
	}
	endDay := time.Now().UTC().Format("2006-01-02")
	if err := client.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := client.Stats()
	if st.ImpressionsDropped != 0 || st.SummarisedDropped != 0 || st.ImpressionsSent+st.SummarisedSent != st.Evaluations || st.Evaluations != 48_000 {
		t.Fatalf("the SDK's own accounting: %+v", st)
	}
	if st.SummarisedSent < st.ImpressionsSent {
		t.Fatalf("summaries %d, impressions %d: the skew should make most evaluations repeats", st.SummarisedSent, st.ImpressionsSent)
	}

	// Stats.
	_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
	var stats []statsEntry
	decode(t, raw, &stats)
	gotStats := map[string][4]int64{}
	for _, s := range stats {
		gotStats[s.FlagKey] = [4]int64{s.Total, s.TrueCount, s.FalseCount, s.UniqueUsers}
	}
	wantStats := map[string][4]int64{}
	for flag, n := range tl.total {
		wantStats[flag] = [4]int64{n, tl.values[flag]["true"], tl.values[flag]["false"], int64(len(tl.users[flag]))}
	}
	if d := cmp.Diff(wantStats, gotStats); d != "" {
		t.Errorf("stats [total, true, false, unique users] (-counted +server):\n%s", d)
	}

	for flag := range tl.total {
		_, raw := me.call(t, "GET", me.path("/impressions/exposure?flag_key="+flag+"&days=2"), nil)
		var exp exposure
		decode(t, raw, &exp)
		got := map[string][2]int64{}
		for _, v := range exp.Variants {
			got[v.Value] = [2]int64{v.Impressions, v.UniqueUsers}
		}
		want := map[string][2]int64{}
		for v, n := range tl.values[flag] {
			want[v] = [2]int64{n, int64(len(tl.valUsers[flag][v]))}
		}
		if d := cmp.Diff(want, got); d != "" || exp.TotalImpressions != tl.total[flag] || exp.TotalUsers != int64(len(tl.users[flag])) {
			t.Errorf("exposure of %s: %d evaluations of %d users; variants [evaluations, users] (-counted +server):\n%s",
				flag, exp.TotalImpressions, exp.TotalUsers, d)
		}
		gotDays := map[string]map[string]int64{}
		for _, d := range exp.Timeline {
			if gotDays[d.Day[:10]] == nil {
				gotDays[d.Day[:10]] = map[string]int64{}
			}
			gotDays[d.Day[:10]][d.Value] += d.Count
		}
		if startDay == endDay { // a run across midnight UTC may stamp a few evaluations on either day
			if d := cmp.Diff(tl.days[flag], gotDays); d != "" {
				t.Errorf("timeline of %s (-counted +server):\n%s", flag, d)
			}
		}
	}

	_, raw = me.call(t, "GET", me.path("/events/keys"), nil)
	var keys []struct {
		EventKey    string `json:"event_key"`
		Total       int64  `json:"total"`
		UniqueUsers int64  `json:"unique_users"`
	}
	decode(t, raw, &keys)
	gotKeys := map[string][2]int64{}
	for _, k := range keys {
		gotKeys[k.EventKey] = [2]int64{k.Total, k.UniqueUsers}
	}
	wantKeys := map[string][2]int64{}
	for k, n := range tl.goals {
		wantKeys[k] = [2]int64{n, int64(len(tl.goalUsers[k]))}
	}
	if d := cmp.Diff(wantKeys, gotKeys); d != "" {
		t.Errorf("event keys [total, users] (-counted +server):\n%s", d)
	}

	for exp, flag := range map[string]string{"colors": "exp-color", "layouts": "exp-layout"} {
		res := me.results(t, exp)
		got := map[string][2]int64{}
		for _, v := range res.Variants {
			got[v.Variant] = [2]int64{v.Exposed, v.Converted}
		}
		want := map[string][2]int64{}
		users := make([]string, 0, len(tl.first[flag]))
		for u := range tl.first[flag] {
			users = append(users, u)
		}
		sort.Strings(users)
		for _, u := range users {
			arm := want[tl.first[flag][u]]
			arm[0]++
			if tl.converted[flag][u] {
				arm[1]++
			}
			want[tl.first[flag][u]] = arm
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("experiment %s [exposed, converted] (-counted +server):\n%s", exp, d)
		}
	}
}
