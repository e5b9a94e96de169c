package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// ofrepLane is one environment evaluated over OFREP through one instance.
type ofrepLane struct {
	name string
	s    *apptest.Server
	me   *measEnv // reads of the lane's environment (its "production")
	env  uuid.UUID
	keys [2]string // a server key and a client key of the environment
	// Filled by the run: the values served, in request order (identified
	// and anonymous alike), and the exposures recorded, in order.
	values   []string
	recorded []exposureTriple
	start    time.Time
	end      time.Time
}

type exposureTriple struct{ flag, user, value string }

// ofrepExactFlags are the flags every lane's environment gets: an
// experiment with weighted variants, a 50 % rollout, and a flag whose value
// for one user changes with an attribute.
var ofrepExactFlags = []map[string]any{
	{"key": "exp-color", "is_enabled": true, "flag_type": "string", "default_value": "none", "client_side": true,
		"variants": []any{map[string]any{"value": "red", "weight": 1}, map[string]any{"value": "green", "weight": 1}, map[string]any{"value": "blue", "weight": 2}}},
	{"key": "banner", "is_enabled": true, "rollout_percentage": 50, "client_side": true},
	{"key": "tier", "is_enabled": true, "flag_type": "string", "default_value": "basic", "client_side": true,
		"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"pro"}, "variant": "gold"}}},
}

func newOFREPLane(t *testing.T, name string, s *apptest.Server, admin string, project, env uuid.UUID) *ofrepLane {
	t.Helper()
	l := &ofrepLane{name: name, s: s, env: env,
		me:   &measEnv{flagEnv: &flagEnv{s: s, token: admin, project: project.String(), envs: map[string]string{"production": env.String()}}},
		keys: [2]string{s.SDKKey(t, env), newKindKey(t, s, admin, project, env, "client").Key},
	}
	for _, f := range ofrepExactFlags {
		if st, b := l.me.call(t, "POST", l.me.path("/flags"), f); st != http.StatusOK && st != http.StatusCreated {
			t.Fatalf("%s: create %v = %d %v", name, f["key"], st, b)
		}
	}
	l.me.experiment(t, "colors", "exp-color", "purchase", nil)
	return l
}

// ofrepStep is one step of the run: a user (empty: anonymous) evaluating
// every flag, then perhaps buying.
type ofrepStep struct {
	user, plan string
	buys       bool
}

func ofrepSteps(n, population int) []ofrepStep {
	rng := rand.New(rand.NewPCG(25, 2026))
	zipf := rand.NewZipf(rng, 1.2, 1, uint64(population-1)) // a few users evaluate most often
	steps := make([]ofrepStep, n)
	for i := range steps {
		st := ofrepStep{user: fmt.Sprintf("u%d", zipf.Uint64()), plan: []string{"pro", "free"}[rng.IntN(2)]}
		if rng.IntN(15) == 0 {
			st.user = "" // anonymous: OFREP records nothing
		}
		st.buys = st.user != "" && rng.IntN(8) == 0
		steps[i] = st
	}
	return steps
}

// run drives the steps through the lane's OFREP route, alternating its
// server and client key, with plain HTTP (it runs beside the other lanes).
func (l *ofrepLane) run(steps []ofrepStep) error {
	l.start = time.Now()
	defer func() { l.end = time.Now() }()
	post := func(path, key string, body any, want int) ([]byte, error) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, l.s.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != want {
			err = fmt.Errorf("%s: POST %s = %d %s", l.name, path, resp.StatusCode, out)
		}
		return out, err
	}
	for i, st := range steps {
		for _, flag := range []string{"exp-color", "banner", "tier"} {
			raw, err := post("/ofrep/v1/evaluate/flags/"+flag, l.keys[i%2], ctxOf(st.user, map[string]any{"plan": st.plan}), http.StatusOK)
			if err != nil {
				return err
			}
			var res struct {
				Variant *string `json:"variant"`
			}
			if err := json.Unmarshal(raw, &res); err != nil || res.Variant == nil {
				return fmt.Errorf("%s: %s answered %s", l.name, flag, raw)
			}
			l.values = append(l.values, *res.Variant)
			if st.user != "" {
				l.recorded = append(l.recorded, exposureTriple{flag, st.user, *res.Variant})
			}
		}
		if st.buys {
			if _, err := post("/api/environments/"+l.env.String()+"/events", l.keys[0],
				[]any{map[string]any{"event_key": "purchase", "user_id": st.user}}, http.StatusNoContent); err != nil {
				return err
			}
		}
	}
	return nil
}

// clockImpressions is how many impressions a memory of capacity exposures
// records for the evaluations in order, forgetting as documented
// (docs/reference/ofrep.md, Impressions): by the clock, whose hand passes
// over an exposure evaluated since it was added or last passed, clearing
// its mark, and stops at the first one not evaluated since.
func clockImpressions(capacity int, evals []exposureTriple) int {
	type entry struct {
		x        exposureTriple
		recently bool
	}
	var entries []entry
	at := map[exposureTriple]int{}
	hand, n := 0, 0
	for _, x := range evals {
		if i, ok := at[x]; ok {
			entries[i].recently = true
			continue
		}
		n++
		if len(entries) < capacity {
			at[x] = len(entries)
			entries = append(entries, entry{x: x})
			continue
		}
		for entries[hand].recently {
			entries[hand].recently = false
			hand = (hand + 1) % capacity
		}
		delete(at, entries[hand].x)
		entries[hand] = entry{x: x}
		at[x] = hand
		hand = (hand + 1) % capacity
	}
	return n
}

// ofrepFigures is every statistic the test compares, without the times.
type ofrepFigures struct {
	Stats    map[string][4]int64                    // flag -> total, true, false, unique users
	Exposure map[string]map[string][2]int64         // flag -> value -> evaluations, users
	Totals   map[string][2]int64                    // flag -> total evaluations, users
	Timeline map[string]map[string]map[string]int64 // flag -> UTC day -> value -> evaluations
	Results  experimentResult
	Status   map[string]flagStatus // without last_evaluated_at
}

// figures reads every statistic of the lane's environment through s.
func (l *ofrepLane) figures(t *testing.T, s *apptest.Server) (ofrepFigures, map[string]time.Time) {
	t.Helper()
	me := &measEnv{flagEnv: &flagEnv{s: s, token: l.me.token, envs: l.me.envs}}
	f := ofrepFigures{Stats: map[string][4]int64{}, Exposure: map[string]map[string][2]int64{}, Totals: map[string][2]int64{},
		Timeline: map[string]map[string]map[string]int64{}, Status: map[string]flagStatus{}}
	times := map[string]time.Time{}
	_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
	var stats []statsEntry
	decode(t, raw, &stats)
	for _, s := range stats {
		f.Stats[s.FlagKey] = [4]int64{s.Total, s.TrueCount, s.FalseCount, s.UniqueUsers}
		times["stats last_seen "+s.FlagKey] = s.LastSeen
	}
	for _, flag := range []string{"exp-color", "banner", "tier"} {
		_, raw := me.call(t, "GET", me.path("/impressions/exposure?flag_key="+flag+"&days=2"), nil)
		var exp exposure
		decode(t, raw, &exp)
		f.Totals[flag] = [2]int64{exp.TotalImpressions, exp.TotalUsers}
		f.Exposure[flag] = map[string][2]int64{}
		for _, v := range exp.Variants {
			f.Exposure[flag][v.Value] = [2]int64{v.Impressions, v.UniqueUsers}
		}
		f.Timeline[flag] = map[string]map[string]int64{}
		for _, d := range exp.Timeline {
			if f.Timeline[flag][d.Day[:10]] == nil {
				f.Timeline[flag][d.Day[:10]] = map[string]int64{}
			}
			f.Timeline[flag][d.Day[:10]][d.Value] += d.Count
		}
	}
	f.Results = me.results(t, "colors")
	for k, s := range me.statuses(t) {
		if s.LastEvaluatedAt != nil {
			times["status last_evaluated_at "+k] = *s.LastEvaluatedAt
		}
		s.LastEvaluatedAt = nil
		f.Status[k] = s
	}
	return f, times
}

// impressions lists every impression of the lane's environment through s.
func (l *ofrepLane) impressions(t *testing.T, s *apptest.Server) []impressionItem {
	t.Helper()
	me := &measEnv{flagEnv: &flagEnv{s: s, token: l.me.token, envs: l.me.envs}}
	var out []impressionItem
	for {
		page := me.list(t, fmt.Sprintf("?limit=200&offset=%d", len(out)))
		out = append(out, page.Items...)
		if len(page.Items) == 0 || int64(len(out)) >= page.Total {
			return out
		}
	}
}

// waitForEvaluations polls the lane's stats until they hold want
// evaluations in all.
func (l *ofrepLane) waitForEvaluations(t *testing.T, s *apptest.Server, want int64) {
	t.Helper()
	me := &measEnv{flagEnv: &flagEnv{s: s, token: l.me.token, envs: l.me.envs}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
		var stats []statsEntry
		decode(t, raw, &stats)
		var n int64
		for _, s := range stats {
			n += s.Total
		}
		if n == want {
			return
		}
		if n > want || time.Now().After(deadline) {
			t.Fatalf("%s: %d evaluations recorded, want %d", l.name, n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Exactness of OFREP exposure recording (docs/reference/ofrep.md,
// Impressions): the same evaluations of repeat users through the real OFREP
// route, in three environments of one database, each behind its own
// instance: with the default exposure memory (impressions of first
// exposures, summary counts otherwise, written only at shutdown here), with
// memory 0 (one impression per evaluation) and with a memory of 3 that
// forgets all the time. Stats, exposure (variants, users, timeline),
// experiment results and flag status are equal in all three and to the
// figures counted from the evaluations; the impression lists show first
// exposures only (with the tiny memory: first exposures since forgetting).
func TestOFREPExposuresAreExact(t *testing.T) {
	t.Parallel()
	// The remembering instance writes summaries only when it stops (its
	// flush interval is an hour): shutdown must write everything.
	sA := apptest.Start(t, nil, app.WithExposureFlush(time.Hour))
	sB := apptest.Start(t, map[string]string{"DATABASE_URL": sA.DBURL, "OFREP_EXPOSURE_MEMORY": "0"})
	sC := apptest.Start(t, map[string]string{"DATABASE_URL": sA.DBURL, "OFREP_EXPOSURE_MEMORY": "3"})
	_, admin := sA.User(t, "admin@example.com", "admin")
	project, envs := sA.DefaultProject(t)
	lanes := []*ofrepLane{
		newOFREPLane(t, "memory default", sA, admin, project, envs["production"]),
		newOFREPLane(t, "memory 0", sB, admin, project, envs["staging"]),
		newOFREPLane(t, "memory 3", sC, admin, project, envs["development"]),
	}
	a, b, c := lanes[0], lanes[1], lanes[2]

	steps := ofrepSteps(300, 120)
	startDay := time.Now().UTC().Format(time.DateOnly)
	var wg sync.WaitGroup
	errs := make([]error, len(lanes))
	for i, l := range lanes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = l.run(steps) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	endDay := time.Now().UTC().Format(time.DateOnly)
	for _, l := range lanes[1:] {
		if !cmp.Equal(a.values, l.values) {
			t.Fatalf("%s served other values than %s", l.name, a.name)
		}
	}

	// The figures counted from the evaluations.
	tl := newTally()
	distinct := map[exposureTriple]bool{}
	for _, x := range a.recorded {
		tl.evaluation(x.flag, x.user, x.value, startDay)
		distinct[x] = true
	}
	for _, st := range steps {
		if st.buys {
			set(tl.converted, "exp-color", st.user)
		}
	}
	evaluations := int64(len(a.recorded))
	if len(distinct)*2 > len(a.recorded) {
		t.Fatalf("%d exposures in %d evaluations: the run needs more repeats", len(distinct), len(a.recorded))
	}
	want := ofrepFigures{Stats: map[string][4]int64{}, Exposure: map[string]map[string][2]int64{}, Totals: map[string][2]int64{},
		Timeline: tl.days}
	for flag, n := range tl.total {
		users := int64(len(tl.users[flag]))
		want.Stats[flag] = [4]int64{n, tl.values[flag]["true"], tl.values[flag]["false"], users}
		want.Totals[flag] = [2]int64{n, users}
		want.Exposure[flag] = map[string][2]int64{}
		for v, m := range tl.values[flag] {
			want.Exposure[flag][v] = [2]int64{m, int64(len(tl.valUsers[flag][v]))}
		}
	}
	wantArms := map[string][2]int64{}
	for u, v := range tl.first["exp-color"] {
		arm := wantArms[v]
		arm[0]++
		if tl.converted["exp-color"][u] {
			arm[1]++
		}
		wantArms[v] = arm
	}

	// Until it stops, the remembering instance has written no summary.
	b.waitForEvaluations(t, sB, evaluations)
	c.waitForEvaluations(t, sC, evaluations)
	if early, _ := a.figures(t, sB); early.Stats["banner"][0] >= want.Stats["banner"][0] {
		t.Fatalf("%s: %d evaluations of banner visible before shutdown; the summaries should still wait", a.name, early.Stats["banner"][0])
	}
	sA.Stop()
	a.waitForEvaluations(t, sB, evaluations)

	var figures []ofrepFigures
	for _, l := range lanes {
		f, times := l.figures(t, sB)
		figures = append(figures, f)
		for what, at := range times {
			if at.Before(l.start.Add(-time.Second)) || at.After(l.end.Add(time.Second)) {
				t.Errorf("%s: %s = %s, outside the run (%s to %s)", l.name, what, at, l.start, l.end)
			}
		}
		if d := cmp.Diff(want.Stats, f.Stats); d != "" {
			t.Errorf("%s: stats [total, true, false, users] (-counted +server):\n%s", l.name, d)
		}
		if d := cmp.Diff(want.Totals, f.Totals); d != "" {
			t.Errorf("%s: exposure totals [evaluations, users] (-counted +server):\n%s", l.name, d)
		}
		if d := cmp.Diff(want.Exposure, f.Exposure); d != "" {
			t.Errorf("%s: exposure variants [evaluations, users] (-counted +server):\n%s", l.name, d)
		}
		if startDay == endDay { // a run across midnight UTC may file a few evaluations on either day
			if d := cmp.Diff(want.Timeline, f.Timeline); d != "" {
				t.Errorf("%s: timeline (-counted +server):\n%s", l.name, d)
			}
		}
		arms := map[string][2]int64{}
		for _, v := range f.Results.Variants {
			arms[v.Variant] = [2]int64{v.Exposed, v.Converted}
		}
		if d := cmp.Diff(wantArms, arms); d != "" {
			t.Errorf("%s: experiment arms [exposed, converted] (-counted +server):\n%s", l.name, d)
		}
		for flag, n := range tl.total {
			s := f.Status[flag]
			if s.Evaluations7d != n || !cmp.Equal(values(s), tl.values[flag]) {
				t.Errorf("%s: status of %s: %d evaluations %v, want %d %v", l.name, flag, s.Evaluations7d, values(s), n, tl.values[flag])
			}
		}
	}
	// And the three agree on everything else the routes say (p-values,
	// statuses, ...).
	for i, l := range lanes[1:] {
		if d := cmp.Diff(figures[0], figures[i+1]); d != "" {
			t.Errorf("%s and %s differ (-%s +%s):\n%s", a.name, l.name, a.name, l.name, d)
		}
	}

	// The impression lists: first exposures only; one per evaluation; first
	// exposures since the tiny memory forgot them.
	listed := func(l *ofrepLane) (int, map[exposureTriple]int) {
		items := l.impressions(t, sB)
		n := map[exposureTriple]int{}
		for _, it := range items {
			n[exposureTriple{it.FlagKey, *it.UserID, it.Value}]++
		}
		return len(items), n
	}
	if n, per := listed(a); n != len(distinct) || len(per) != len(distinct) {
		t.Errorf("%s: %d impressions of %d exposures, want one per exposure (%d)", a.name, n, len(per), len(distinct))
	}
	if n, _ := listed(b); n != len(b.recorded) {
		t.Errorf("%s: %d impressions, want one per identified evaluation (%d)", b.name, n, len(b.recorded))
	}
	wantC := clockImpressions(3, c.recorded)
	if n, per := listed(c); n != wantC || len(per) != len(distinct) || wantC <= len(distinct) {
		t.Errorf("%s: %d impressions of %d exposures, want %d (of %d exposures, more than one for some)", c.name, n, len(per), wantC, len(distinct))
	}
}

// The first impression of each exposure carries the time of the first
// evaluation; the repeats after it are counts.
func TestOFREPImpressionIsTheFirstExposure(t *testing.T) {
	t.Parallel()
	oe := newOFREPEnv(t)
	before := time.Now().UTC().Truncate(time.Microsecond)
	oe.eval(t, oe.server, "greeting", ctxOf("ada", map[string]any{"country": "DE"}))
	between := time.Now().UTC()
	for range 2 {
		oe.eval(t, oe.server, "greeting", ctxOf("ada", map[string]any{"country": "DE"}))
	}
	oe.eval(t, oe.client.Key, "greeting", ctxOf("ada", nil)) // another value: another first exposure
	me := &measEnv{flagEnv: &flagEnv{s: oe.s, token: oe.admin, envs: map[string]string{"production": oe.env.String()}}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var stats []statsEntry
		_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
		decode(t, raw, &stats)
		if len(stats) == 1 && stats[0].Total == 4 {
			if stats[0].UniqueUsers != 1 {
				t.Errorf("stats %+v, want 1 user", stats[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want 4 evaluations of greeting", stats)
		}
		time.Sleep(50 * time.Millisecond)
	}
	items := me.list(t, "").Items
	sort.Slice(items, func(i, j int) bool { return items[i].EvaluatedAt.Before(items[j].EvaluatedAt) })
	if len(items) != 2 || items[0].Value != "hallo" || items[1].Value != "hello" ||
		items[0].EvaluatedAt.Before(before) || !items[0].EvaluatedAt.Before(between) {
		t.Errorf("impressions %+v, want hallo (first evaluated between %s and %s) then hello", items, before, between)
	}
}
