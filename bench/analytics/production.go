package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"math/rand"
	"net/http"
	"sort"
	"time"

	"github.com/switchyard/switchyard/sdkgo"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// prodFlags are the production shape's 10 flags (in the development
// environment): booleans at several rollouts, one fully launched, one off,
// and multivariate string and integer flags, so that a user sees one value
// of each flag and flags have one to three values.
var prodFlags = []map[string]any{
	{"key": "checkout-v2", "is_enabled": true, "rollout_percentage": 50},
	{"key": "new-search", "is_enabled": true, "rollout_percentage": 10},
	{"key": "dark-mode", "is_enabled": true, "rollout_percentage": 90},
	{"key": "fast-path", "is_enabled": true, "rollout_percentage": 100},
	{"key": "beta-banner", "is_enabled": false},
	{"key": "recommendations", "is_enabled": true, "rollout_percentage": 25},
	{"key": "rate-limit-v2", "is_enabled": true, "rollout_percentage": 75},
	{"key": "pricing-page", "is_enabled": true, "flag_type": "string", "default_value": "control",
		"variants": []map[string]any{{"weight": 34, "value": "control"}, {"weight": 33, "value": "variant-a"}, {"weight": 33, "value": "variant-b"}}},
	{"key": "onboarding", "is_enabled": true, "flag_type": "string", "default_value": "classic",
		"variants": []map[string]any{{"weight": 50, "value": "classic"}, {"weight": 50, "value": "guided"}}},
	{"key": "cache-ttl", "is_enabled": true, "flag_type": "integer", "default_value": 60,
		"variants": []map[string]any{{"weight": 1, "value": 30}, {"weight": 1, "value": 60}, {"weight": 1, "value": 120}}},
}

// perUserTables hold a row per (flag, user) or (flag, user, value): the
// raw impressions and the per-user rollup (docs/performance.md,
// Measurement). Their rows are charged to first-seen triples; every other
// table's rows to evaluations.
var perUserTables = map[string]bool{"impressions": true, "impression_users": true}

// bitset is a set of user indexes.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }
func (b bitset) add(i int) bool {
	w, m := i/64, uint64(1)<<(i%64)
	had := b[w]&m != 0
	b[w] |= m
	return !had
}
func (b bitset) count() int64 {
	var n int
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return int64(n)
}
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}

// tally is the tool's own count of what it evaluated.
type tally struct {
	users   int
	evals   int64
	triples int64 // distinct (flag, user, value)
	flags   []flagTally
}

type flagTally struct {
	key    string
	total  int64
	values map[string]*valueTally
}

type valueTally struct {
	count int64
	users bitset
}

func (t *tally) record(flag, user int, value string) {
	t.evals++
	f := &t.flags[flag]
	f.total++
	v := f.values[value]
	if v == nil {
		v = &valueTally{users: newBitset(t.users)}
		f.values[value] = v
	}
	v.count++
	if v.users.add(user) {
		t.triples++
	}
}

func (f *flagTally) uniqueUsers(n int) int64 {
	all := newBitset(n)
	for _, v := range f.values {
		all.or(v.users)
	}
	return all.count()
}

// productionShape is measurement 1.
func productionShape(ctx context.Context, o options, fx *fixture, srv *server, rep *report) error {
	const env = "development"
	nflags := len(prodFlags)
	fmt.Printf("== 1. Production shape: the Go SDK evaluates %d flags for users drawn from Zipf(s=%.2f) over %d at %d evaluations/s for %s\n",
		nflags, o.zipfS, o.users, o.rate, o.duration)
	for _, f := range prodFlags {
		if err := fx.call(ctx, fx.token, http.MethodPost, fx.envPath(env)+"/flags", f, http.StatusOK, nil); err != nil {
			return fmt.Errorf("create flag: %w", err)
		}
	}
	quiet := time.Now()
	before, err := fx.settledWrites(ctx, quiet)
	if err != nil {
		return err
	}

	opts := []sdkgo.Option{sdkgo.WithBaseURL(fx.base), sdkgo.WithInitTimeout(30 * time.Second),
		sdkgo.WithLogger(slog.New(slog.DiscardHandler))}
	if o.exposureMemory >= 0 {
		opts = append(opts, sdkgo.WithExposureMemory(o.exposureMemory))
	}
	cpu := startCPU(srv.pid(), fx.dbName)
	client, err := sdkgo.New(ctx, fx.keys[env], opts...)
	if err != nil {
		return fmt.Errorf("sdk: %w", err)
	}
	defer client.Close(context.Background())
	if got := client.Stats().Flags; got != nflags {
		return fmt.Errorf("the SDK holds %d flags, want %d", got, nflags)
	}

	t := &tally{users: o.users, flags: make([]flagTally, nflags)}
	keys := make([]string, nflags)
	for i, f := range prodFlags {
		keys[i] = f["key"].(string)
		t.flags[i] = flagTally{key: keys[i], values: map[string]*valueTally{}}
	}
	userKeys := make([]string, o.users)
	for i := range userKeys {
		userKeys[i] = fmt.Sprintf("user-%06d", i)
	}
	zipf := rand.NewZipf(rand.New(rand.NewSource(17)), o.zipfS, 1, uint64(o.users-1))
	// A request evaluates every flag for one user: rate/nflags requests a
	// second, paced against the clock in steps of about 2 ms.
	reqRate := float64(o.rate) / float64(nflags)
	start := time.Now()
	var requests int
	var behind time.Duration
	for {
		el := time.Since(start)
		if el >= o.duration {
			break
		}
		due := int(el.Seconds() * reqRate)
		if due-requests > int(reqRate/10) { // more than 100 ms behind
			behind = max(behind, time.Duration(float64(due-requests)/reqRate*float64(time.Second)))
		}
		for ; requests < due; requests++ {
			u := int(zipf.Uint64())
			for i, k := range keys {
				d := client.Detail(k, userKeys[u], nil)
				t.record(i, u, eval.RenderValue(d.Value))
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	evalWall := time.Since(start)
	flushStart := time.Now()
	fctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	err = client.Flush(fctx)
	cancel()
	if err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	flushed := time.Since(flushStart)
	folded, err := fx.waitFolded(ctx, 10*time.Minute)
	if err != nil {
		return err
	}
	use := cpu.stop()
	st := client.Stats()
	fmt.Printf("evaluated %d in %s (%.0f/s; at most %s behind the pace), %d distinct (flag, user, value) (%.1f %% of evaluations), %d users\n",
		t.evals, evalWall.Round(time.Millisecond), float64(t.evals)/evalWall.Seconds(), behind.Round(time.Millisecond),
		t.triples, 100*float64(t.triples)/float64(t.evals), t.usersSeen())
	fmt.Printf("SDK: evaluations %d, impressions %d (sent %d, dropped %d), summarised %d (sent %d in %d rows, dropped %d), exposure memory %d\n",
		st.Evaluations, st.Impressions, st.ImpressionsSent, st.ImpressionsDropped, st.Summarised, st.SummarisedSent, st.SummariesSent, st.SummarisedDropped, st.ExposureMemory)
	fmt.Printf("Flush took %s; the backlog was folded %s after it\n", flushed.Round(time.Millisecond), folded.Round(time.Millisecond))

	rep.prodEvals, rep.prodTriples, rep.prodWall = t.evals, t.triples, evalWall
	rep.prodCPU = use
	rep.prodSDK = st
	rep.prodBehind = behind

	// Exactness: the SDK's own counters, then every statistic.
	check := func(what string, got, want int64) {
		if got != want {
			rep.mismatch(fmt.Sprintf("%s: server says %d, the tool counted %d", what, got, want))
		}
	}
	check("SDK Stats().Evaluations", st.Evaluations, t.evals)
	check("SDK impressions + summarised sent", st.ImpressionsSent+st.SummarisedSent, t.evals)
	if o.exposureMemory < 0 || int64(o.exposureMemory) >= t.triples {
		check("SDK impressions (one per first-seen (flag, user, value))", st.Impressions, t.triples)
	}
	checked, err := verify(ctx, fx, env, t, check)
	if err != nil {
		return err
	}
	rep.prodChecked = checked
	if len(rep.mismatches) == 0 {
		fmt.Printf("exact: %d figures (stats, exposure, flag status) equal the tool's count\n", checked)
	}

	after, err := fx.settledWrites(ctx, time.Now())
	if err != nil {
		return err
	}
	rep.prodWrites = after.minus(before)
	rep.prodDayTriples = expectedTriples(o.users, o.zipfS, reqRate*86400) * float64(nflags)
	fmt.Println()
	return nil
}

func (t *tally) usersSeen() int64 {
	all := newBitset(t.users)
	for _, f := range t.flags {
		for _, v := range f.values {
			all.or(v.users)
		}
	}
	return all.count()
}

// expectedTriples is the expected number of distinct users among draws
// draws from Zipf(s) over n users (ranks 1..n, P(k) ∝ k^-s): in a day each
// seen user is one (flag, user, value) per flag, since the flags do not
// change.
func expectedTriples(n int, s, draws float64) float64 {
	var h float64
	for k := 1; k <= n; k++ {
		h += math.Pow(float64(k), -s)
	}
	var seen float64
	for k := 1; k <= n; k++ {
		p := math.Pow(float64(k), -s) / h
		seen += -math.Expm1(draws * math.Log1p(-p))
	}
	return seen
}

// verify reads stats, exposure and flag status and compares each figure
// with the tally through check; it returns how many figures it compared.
func verify(ctx context.Context, fx *fixture, env string, t *tally, check func(string, int64, int64)) (int, error) {
	n := 0
	chk := func(what string, got, want int64) { n++; check(what, got, want) }
	var stats []struct {
		FlagKey     string `json:"flag_key"`
		Total       int64  `json:"total"`
		TrueCount   int64  `json:"true_count"`
		FalseCount  int64  `json:"false_count"`
		UniqueUsers int64  `json:"unique_users"`
	}
	if err := fx.call(ctx, fx.keys[env], http.MethodGet, fx.envPath(env)+"/impressions/stats", nil, http.StatusOK, &stats); err != nil {
		return n, err
	}
	byKey := map[string]int{}
	for i, s := range stats {
		byKey[s.FlagKey] = i
	}
	chk("stats: flags listed", int64(len(stats)), int64(len(t.flags)))
	for _, f := range t.flags {
		i, ok := byKey[f.key]
		if !ok {
			chk("stats: "+f.key+" listed", 0, 1)
			continue
		}
		s := stats[i]
		var tc, fc int64
		if v := f.values["true"]; v != nil {
			tc = v.count
		}
		if v := f.values["false"]; v != nil {
			fc = v.count
		}
		chk("stats "+f.key+" total", s.Total, f.total)
		chk("stats "+f.key+" true_count", s.TrueCount, tc)
		chk("stats "+f.key+" false_count", s.FalseCount, fc)
		chk("stats "+f.key+" unique_users", s.UniqueUsers, f.uniqueUsers(t.users))
	}
	for _, f := range t.flags {
		var ex struct {
			TotalImpressions int64 `json:"total_impressions"`
			TotalUsers       int64 `json:"total_users"`
			Variants         []struct {
				Value       string `json:"value"`
				Impressions int64  `json:"impressions"`
				UniqueUsers int64  `json:"unique_users"`
			} `json:"variants"`
			Timeline []struct {
				Value string `json:"value"`
				Count int64  `json:"count"`
			} `json:"timeline"`
		}
		if err := fx.call(ctx, fx.keys[env], http.MethodGet, fx.envPath(env)+"/impressions/exposure?days=2&flag_key="+f.key, nil, http.StatusOK, &ex); err != nil {
			return n, err
		}
		chk("exposure "+f.key+" total_impressions", ex.TotalImpressions, f.total)
		chk("exposure "+f.key+" total_users", ex.TotalUsers, f.uniqueUsers(t.users))
		chk("exposure "+f.key+" variants", int64(len(ex.Variants)), int64(len(f.values)))
		timeline := map[string]int64{}
		for _, d := range ex.Timeline {
			timeline[d.Value] += d.Count
		}
		for _, v := range ex.Variants {
			want := f.values[v.Value]
			if want == nil {
				chk("exposure "+f.key+" variant "+v.Value+" exists", 1, 0)
				continue
			}
			chk("exposure "+f.key+" "+v.Value+" impressions", v.Impressions, want.count)
			chk("exposure "+f.key+" "+v.Value+" unique_users", v.UniqueUsers, want.users.count())
		}
		for _, val := range sortedKeys(f.values) {
			chk("exposure "+f.key+" "+val+" timeline (sum over days)", timeline[val], f.values[val].count)
		}
	}
	var status []struct {
		FlagKey       string `json:"flag_key"`
		Status        string `json:"status"`
		Evaluations7d int64  `json:"evaluations_7d"`
		Values7d      []struct {
			Value string `json:"value"`
			Count int64  `json:"count"`
		} `json:"values_7d"`
	}
	if err := fx.call(ctx, fx.token, http.MethodGet, fx.envPath(env)+"/flag-status", nil, http.StatusOK, &status); err != nil {
		return n, err
	}
	for _, s := range status {
		var f *flagTally
		for i := range t.flags {
			if t.flags[i].key == s.FlagKey {
				f = &t.flags[i]
			}
		}
		if f == nil {
			continue
		}
		chk("flag-status "+f.key+" evaluations_7d", s.Evaluations7d, f.total)
		for _, v := range s.Values7d {
			var want int64
			if vt := f.values[v.Value]; vt != nil {
				want = vt.count
			}
			chk("flag-status "+f.key+" "+v.Value+" count", v.Count, want)
		}
		chk("flag-status "+f.key+" values", int64(len(s.Values7d)), int64(len(f.values)))
	}
	chk("flag-status flags listed", int64(len(status)), int64(len(t.flags)))
	return n, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
