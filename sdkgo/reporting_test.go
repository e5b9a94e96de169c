package sdkgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard/switchyard/sdkgo"
)

// fakeServer stands in for Switchyard at the process boundary: it streams a
// fixed set of flags and takes impressions and summaries as the API does
// (docs/reference/measurement.md, Summaries): 413 over 500 items, every
// summary field checked.
type fakeServer struct {
	*httptest.Server
	failImpressions atomic.Int64 // refuse this many impression batches with 500

	mu          sync.Mutex
	impressions []impression
	summaries   []summary
	bad         []string // contract violations seen
}

type impression struct {
	FlagKey     string    `json:"flag_key"`
	UserID      *string   `json:"user_id"`
	Value       string    `json:"value"`
	EvaluatedAt time.Time `json:"evaluated_at"`
}

type summary struct {
	FlagKey string    `json:"flag_key"`
	Value   string    `json:"value"`
	Count   int64     `json:"count"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
}

const envID = "4b0d9f4e-0000-4000-8000-000000000001"

// testFlags: checkout (boolean, 50 % rollout: true or false per user), and
// color (string: gold for plan pro, else a red/green/blue split), so one
// user can see several values of one flag.
var testFlags = []string{
	`{"key":"checkout","environment_id":"` + envID + `","is_enabled":true,"rollout_percentage":50,"version":1}`,
	`{"key":"color","environment_id":"` + envID + `","is_enabled":true,"flag_type":"string","default_value":"blue",
	  "rules":[{"attribute":"plan","operator":"equals","values":["pro"],"variant":"gold"}],
	  "variants":[{"weight":1,"value":"red"},{"weight":1,"value":"green"},{"weight":1,"value":"blue"}],"version":1}`,
}

func newFakeServer(t testing.TB, flags []string) *fakeServer {
	t.Helper()
	s := &fakeServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: connected\ndata: {\"environment_id\":%q}\n\n", envID)
		for _, f := range flags {
			fmt.Fprintf(w, "event: update\ndata: {\"type\":\"UPSERT\",\"flag\":%s}\n\n", strings.Join(strings.Fields(f), " "))
		}
		fmt.Fprint(w, "event: ready\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /api/environments/"+envID+"/impressions", func(w http.ResponseWriter, r *http.Request) {
		var batch []impression
		if !s.decode(w, r, &batch) {
			return
		}
		if s.failImpressions.Add(-1) >= 0 {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		s.mu.Lock()
		s.impressions = append(s.impressions, batch...)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /api/environments/"+envID+"/impressions/summaries", func(w http.ResponseWriter, r *http.Request) {
		var raw []map[string]json.RawMessage
		if !s.decode(w, r, &raw) {
			return
		}
		var batch []summary
		for _, row := range raw {
			var sum summary
			b, _ := json.Marshal(row)
			err := json.Unmarshal(b, &sum)
			var count json.Number
			_ = json.Unmarshal(row["count"], &count)
			switch {
			case len(row) != 5 || err != nil:
				s.violation("summary row %s: %v", b, err)
			case sum.FlagKey == "" || sum.Count < 1 || strings.ContainsAny(count.String(), ".eE") || sum.Start.After(sum.End):
				s.violation("summary row %s breaks the contract", b)
			case !rfc3339(row["start"]) || !rfc3339(row["end"]):
				s.violation("summary row %s: times not RFC 3339", b)
			}
			batch = append(batch, sum)
		}
		s.mu.Lock()
		s.summaries = append(s.summaries, batch...)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /api/environments/"+envID+"/events", func(w http.ResponseWriter, r *http.Request) {
		var batch []json.RawMessage
		if s.decode(w, r, &batch) {
			w.WriteHeader(http.StatusNoContent)
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func rfc3339(raw json.RawMessage) bool {
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, v)
	return err == nil
}

func (s *fakeServer) violation(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bad = append(s.bad, fmt.Sprintf(format, args...))
}

// decode reads a JSON array body, answering 400 or 413 as the API does.
func (s *fakeServer) decode(w http.ResponseWriter, r *http.Request, into any) bool {
	var items []json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&items); err != nil {
		http.Error(w, "not a JSON array", http.StatusBadRequest)
		s.violation("%s: body is not a JSON array", r.URL.Path)
		return false
	}
	if len(items) > 500 {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		s.violation("%s: batch of %d", r.URL.Path, len(items))
		return false
	}
	b, _ := json.Marshal(items)
	if err := json.Unmarshal(b, into); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// received returns what the server holds and fails on contract violations.
func (s *fakeServer) received(t *testing.T) ([]impression, []summary) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.bad {
		t.Error(b)
	}
	return append([]impression(nil), s.impressions...), append([]summary(nil), s.summaries...)
}

func newClient(t *testing.T, s *fakeServer, opts ...sdkgo.Option) *sdkgo.Client {
	t.Helper()
	c, err := sdkgo.New(context.Background(), "sk_live_test",
		append([]sdkgo.Option{sdkgo.WithBaseURL(s.URL), sdkgo.WithEvents(time.Hour, 100_000)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// evaluation is one evaluation of the stream and what it returned.
type evaluation struct{ flag, user, value string }

type triple = evaluation

// skewedStream evaluates n times from workers goroutines: users drawn from a
// Zipf population (a few users evaluate thousands of times, most a few),
// one in ten anonymous, plans switching so that users see several values.
func skewedStream(t *testing.T, c *sdkgo.Client, n, users, workers int) []evaluation {
	t.Helper()
	out := make([][]evaluation, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 17))
			zipf := rand.NewZipf(rng, 1.1, 1, uint64(users-1))
			for range n / workers {
				user := fmt.Sprint("user-", zipf.Uint64())
				if rng.IntN(10) == 0 {
					user = ""
				}
				plan := "free"
				if rng.IntN(4) == 0 {
					plan = "pro"
				}
				attrs := map[string]any{"plan": plan}
				if rng.IntN(2) == 0 {
					v := c.Bool("checkout", user, attrs, false)
					out[w] = append(out[w], evaluation{"checkout", user, fmt.Sprint(v)})
				} else {
					out[w] = append(out[w], evaluation{"color", user, c.String("color", user, attrs, "?")})
				}
			}
		})
	}
	wg.Wait()
	var all []evaluation
	for _, o := range out {
		all = append(all, o...)
	}
	return all
}

type flagValue struct{ flag, value string }

// checkExact checks that what the server received counts every evaluation
// of the stream exactly once, and records every identified user's every
// (flag, value).
func checkExact(t *testing.T, stream []evaluation, imps []impression, sums []summary) {
	t.Helper()
	want := map[flagValue]int64{}
	wantTriples := map[triple]bool{}
	for _, e := range stream {
		want[flagValue{e.flag, e.value}]++
		if e.user != "" {
			wantTriples[e] = true
		}
	}
	got := map[flagValue]int64{}
	gotTriples := map[triple]bool{}
	for _, i := range imps {
		got[flagValue{i.FlagKey, i.Value}]++
		if i.UserID == nil {
			t.Errorf("an anonymous impression (%s=%s); anonymous evaluations are summarised", i.FlagKey, i.Value)
			continue
		}
		gotTriples[triple{i.FlagKey, *i.UserID, i.Value}] = true
	}
	for _, s := range sums {
		got[flagValue{s.FlagKey, s.Value}] += s.Count
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("evaluations per (flag, value)\n got %v\nwant %v", got, want)
	}
	if len(gotTriples) != len(wantTriples) {
		t.Errorf("%d (flag, user, value) triples recorded, want %d", len(gotTriples), len(wantTriples))
	}
	for tr := range wantTriples {
		if !gotTriples[tr] {
			t.Errorf("no impression for %v", tr)
			break
		}
	}
}

// TestEachEvaluationReportedExactlyOnce: a skewed stream over many users and
// values; with a memory that holds every triple, each triple is one
// impression and every other evaluation a summary count, to the unit.
func TestEachEvaluationReportedExactlyOnce(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, testFlags)
	c := newClient(t, s)
	stream := skewedStream(t, c, 40_000, 3_000, 4)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	imps, sums := s.received(t)
	checkExact(t, stream, imps, sums)

	triples := map[triple]bool{}
	var values = map[string]bool{}
	for _, e := range stream {
		if e.user != "" {
			triples[e] = true
		}
		values[e.flag+"="+e.value] = true
	}
	if len(imps) != len(triples) {
		t.Errorf("%d impressions for %d triples; a memory that holds them all sends one each", len(imps), len(triples))
	}
	if len(values) != 6 {
		t.Errorf("the stream produced values %v, want checkout true/false and color red/green/blue/gold", values)
	}
	st := c.Stats()
	var rows, summarised int64
	for _, x := range sums {
		rows++
		summarised += x.Count
	}
	want := sdkgo.Stats{
		Evaluations: int64(len(stream)), Impressions: int64(len(imps)), ImpressionsSent: int64(len(imps)),
		Summarised: summarised, SummarisedSent: summarised, SummariesSent: rows,
		EventsSent: int64(len(imps)), ExposureMemory: len(triples),
	}
	if got := reportingStats(st); got != want {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
	if rows > 6*2 { // (flag, value) pairs, at most two UTC days
		t.Errorf("%d summary rows for 6 (flag, value) pairs in one window", rows)
	}
}

// reportingStats keeps the reporting fields of Stats.
func reportingStats(s sdkgo.Stats) sdkgo.Stats {
	return sdkgo.Stats{
		EventsSent: s.EventsSent, EventsDropped: s.EventsDropped,
		Evaluations: s.Evaluations, Impressions: s.Impressions, ImpressionsQueued: s.ImpressionsQueued,
		ImpressionsSent: s.ImpressionsSent, ImpressionsDropped: s.ImpressionsDropped,
		Summarised: s.Summarised, SummarisedQueued: s.SummarisedQueued, SummarisedSent: s.SummarisedSent,
		SummarisedDropped: s.SummarisedDropped, SummariesSent: s.SummariesSent, ExposureMemory: s.ExposureMemory,
	}
}

// TestSmallMemoryEvictsAndStaysExact: a memory far smaller than the
// population forgets users, who are then reported as impressions again;
// every evaluation is still counted once and the memory stays bounded.
func TestSmallMemoryEvictsAndStaysExact(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, testFlags)
	c := newClient(t, s, sdkgo.WithExposureMemory(100))
	stream := skewedStream(t, c, 20_000, 3_000, 2)
	if st := c.Stats(); st.ExposureMemory != 100 {
		t.Errorf("memory holds %d triples, want its bound 100", st.ExposureMemory)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	imps, sums := s.received(t)
	checkExact(t, stream, imps, sums)
	triples := map[triple]bool{}
	for _, e := range stream {
		if e.user != "" {
			triples[e] = true
		}
	}
	if len(imps) <= len(triples) {
		t.Errorf("%d impressions for %d triples: nothing was evicted", len(imps), len(triples))
	}
	if len(sums) == 0 {
		t.Error("the most frequent users should stay remembered and be summarised")
	}
}

// TestZeroMemoryIsOneImpressionPerEvaluation: WithExposureMemory(0) is a
// per-evaluation sender for identified users.
func TestZeroMemoryIsOneImpressionPerEvaluation(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, testFlags)
	c := newClient(t, s, sdkgo.WithExposureMemory(0))
	for range 3 {
		c.Bool("checkout", "u1", nil, false)
	}
	c.Bool("checkout", "", nil, false)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	imps, sums := s.received(t)
	if len(imps) != 3 || len(sums) != 1 || sums[0].Count != 1 {
		t.Errorf("%d impressions and summaries %+v; want 3 impressions and the anonymous evaluation summarised", len(imps), sums)
	}
}

// TestDroppedImpressionIsNotRemembered: an impression the queue could not
// take, or the server refused, leaves its triple new, so the user is
// recorded at the next evaluation.
func TestDroppedImpressionIsNotRemembered(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, testFlags)
	c := newClient(t, s, sdkgo.WithEvents(time.Hour, 1))
	ctx := context.Background()
	c.String("color", "a", nil, "") // queued
	c.String("color", "b", nil, "") // queue full: dropped
	c.String("color", "a", nil, "") // summarised
	s.failImpressions.Store(1)
	if err := c.Flush(ctx); err == nil {
		t.Error("Flush must report the refused batch")
	}
	st := c.Stats()
	if st.ImpressionsDropped != 2 || st.Impressions != 2 || st.Summarised != 1 || st.SummarisedSent != 1 || st.ExposureMemory != 0 {
		t.Errorf("after a refused batch: %+v", reportingStats(st))
	}
	c.String("color", "a", nil, "")
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c.String("color", "b", nil, "")
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	imps, _ := s.received(t)
	var users []string
	for _, i := range imps {
		users = append(users, *i.UserID)
	}
	if fmt.Sprint(users) != "[a b]" {
		t.Errorf("impressions of %v after the drops, want [a b]", users)
	}
	if st := c.Stats(); st.Evaluations != 5 || st.ImpressionsSent != 2 || st.ImpressionsDropped != 2 || st.SummarisedSent != 1 {
		t.Errorf("final stats %+v", reportingStats(st))
	}
}

// TestCloseFlushesImpressionsAndSummaries, in batches of at most 500, with a
// flush interval that never fires.
func TestCloseFlushesImpressionsAndSummaries(t *testing.T) {
	t.Parallel()
	var flags []string
	for i := range 1201 {
		flags = append(flags, fmt.Sprintf(`{"key":"f%d","environment_id":"%s","is_enabled":true,"version":1}`, i, envID))
	}
	s := newFakeServer(t, flags)
	c := newClient(t, s)
	for i := range 1201 {
		for range 3 {
			c.Bool(fmt.Sprint("f", i), "u1", nil, false)
		}
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	imps, sums := s.received(t)
	var n int64
	for _, x := range sums {
		n += x.Count
	}
	st := c.Stats()
	if len(imps) != 1201 || n != 2402 || st.ImpressionsQueued != 0 || st.SummarisedQueued != 0 || st.EventsDropped != 0 || st.SummarisedDropped != 0 {
		t.Errorf("%d impressions, %d summarised evaluations in %d rows; stats %+v", len(imps), n, len(sums), reportingStats(st))
	}
	if err := c.Flush(context.Background()); err == nil {
		t.Error("Flush after Close must fail")
	}
	c.Bool("f1", "u1", nil, false)
	if st := c.Stats(); st.SummarisedDropped != 1 {
		t.Errorf("an evaluation after Close: %+v", reportingStats(st))
	}
}

// TestWithoutImpressionsReportsNothing: the option stops summaries too.
func TestWithoutImpressionsReportsNothing(t *testing.T) {
	t.Parallel()
	s := newFakeServer(t, testFlags)
	c := newClient(t, s, sdkgo.WithoutImpressions())
	c.Bool("checkout", "u1", nil, false)
	c.Bool("checkout", "", nil, false)
	_ = c.Close(context.Background())
	imps, sums := s.received(t)
	if len(imps)+len(sums) != 0 || c.Stats().Evaluations != 0 {
		t.Errorf("%d impressions and %d summaries with impressions off", len(imps), len(sums))
	}
}

// BenchmarkEvaluateAndReport measures an evaluation with its report: a
// remembered triple (a summary count) and the first of each (an impression).
func BenchmarkEvaluateAndReport(b *testing.B) {
	s := newFakeServer(b, testFlags)
	c, err := sdkgo.New(context.Background(), "sk_live_test", sdkgo.WithBaseURL(s.URL), sdkgo.WithEvents(time.Hour, 10_000_000))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	users := make([]string, 1<<16)
	for i := range users {
		users[i] = fmt.Sprint("user-", i)
	}
	b.Run("summarised", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Bool("checkout", "user-1", nil, false)
			}
		})
	})
	b.Run("impression", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.Bool("checkout", fmt.Sprint("new-", i), nil, false)
		}
	})
}
