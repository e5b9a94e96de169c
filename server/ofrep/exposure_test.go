package ofrep

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// sink is an Ingester that keeps what it is given, per environment, and
// fails impression batches while failImps is set.
type sink struct {
	mu        sync.Mutex
	imps      map[uuid.UUID][]measure.ImpressionInput
	sums      map[uuid.UUID][]measure.SummaryInput
	keys      map[int64]uuid.UUID // the environment each batch's key was for, by key id
	batches   []int               // sizes of every batch
	failImps  atomic.Bool
	wrongKeys int // batches written with a key of another environment
}

func newSink() *sink {
	return &sink{imps: map[uuid.UUID][]measure.ImpressionInput{}, sums: map[uuid.UUID][]measure.SummaryInput{}, keys: map[int64]uuid.UUID{}}
}

func (s *sink) check(p *auth.Principal, env uuid.UUID, n int) {
	if p.EnvironmentID != env || p.Kind != auth.KindSDKKey {
		s.wrongKeys++
	}
	s.batches = append(s.batches, n)
}

func (s *sink) IngestImpressions(_ context.Context, p *auth.Principal, env uuid.UUID, items []measure.ImpressionInput) error {
	if s.failImps.Load() {
		return errors.New("database away")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.check(p, env, len(items))
	for _, it := range items {
		u, at := *it.UserID, *it.EvaluatedAt // copies: the caller's slice is not ours to keep
		it.UserID, it.EvaluatedAt = &u, &at
		s.imps[env] = append(s.imps[env], it)
	}
	return nil
}

func (s *sink) IngestSummaries(_ context.Context, p *auth.Principal, env uuid.UUID, items []measure.SummaryInput) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.check(p, env, len(items))
	s.sums[env] = append(s.sums[env], items...)
	return nil
}

// triple is an impression as the tests compare it.
type triple struct{ Flag, User, Value string }

func (s *sink) triples(env uuid.UUID) []triple {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []triple
	for _, it := range s.imps[env] {
		out = append(out, triple{it.FlagKey, *it.UserID, it.Value})
	}
	return out
}

// counts sums the summary rows by flag and value.
func (s *sink) counts(env uuid.UUID) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for _, r := range s.sums[env] {
		out[r.FlagKey+"="+r.Value] += r.Count
	}
	return out
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

var noon = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func keyOf(env uuid.UUID, id int64, client bool) *auth.Principal {
	return &auth.Principal{Kind: auth.KindSDKKey, KeyID: id, Client: client, EnvironmentID: env}
}

// newRecorder starts Exposures on a sink; the flush interval is long, so
// that only a full batch or Close writes.
func newRecorder(t *testing.T, cfg ExposuresConfig) (*Exposures, *sink) {
	t.Helper()
	s := newSink()
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Hour
	}
	e := NewExposures(s, cfg)
	e.Start()
	return e, s
}

// The first evaluation of an (environment, flag, user, value) is an
// impression; the others are counts in one summary row per environment,
// flag and value, written with a key of that environment, at Close.
func TestRecordFirstExposuresAsImpressionsAndRepeatsAsCounts(t *testing.T) {
	c := &clock{now: noon}
	var dropped atomic.Int64
	e, s := newRecorder(t, ExposuresConfig{Memory: 100, Now: c.Now, Dropped: func() { dropped.Add(1) }})
	a1, a2, b := keyOf(envA, 1, false), keyOf(envA, 2, true), keyOf(envB, 3, false)
	steps := []struct {
		p                 *auth.Principal
		flag, user, value string
	}{
		{a1, "f", "u1", "true"}, {a2, "f", "u1", "true"}, {a1, "f", "u1", "true"},
		{a1, "f", "u2", "true"},
		{a2, "f", "u1", "false"}, {a1, "f", "u1", "false"},
		{a1, "g", "u1", "x"},
		{b, "f", "u1", "true"}, {b, "f", "u1", "true"},
	}
	for i, st := range steps {
		c.Set(noon.Add(time.Duration(i) * time.Second))
		e.Record(st.p, st.flag, st.user, st.value)
	}
	if got := s.triples(envA); len(got) != 0 {
		t.Fatalf("written before a flush: %v", got)
	}
	e.Close()

	wantA := []triple{{"f", "u1", "true"}, {"f", "u2", "true"}, {"f", "u1", "false"}, {"g", "u1", "x"}}
	if d := cmp.Diff(wantA, s.triples(envA)); d != "" {
		t.Errorf("impressions of A (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]triple{{"f", "u1", "true"}}, s.triples(envB)); d != "" {
		t.Errorf("impressions of B (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{"f=true": 2, "f=false": 1}, s.counts(envA)); d != "" {
		t.Errorf("summary counts of A (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{"f=true": 1}, s.counts(envB)); d != "" {
		t.Errorf("summary counts of B (-want +got):\n%s", d)
	}
	// Times: each impression at its evaluation, each row from its first
	// summarised evaluation to its last.
	if at := *s.imps[envA][2].EvaluatedAt; !at.Equal(noon.Add(4 * time.Second)) {
		t.Errorf("impression of f=false for u1 at %s, want its evaluation's time", at)
	}
	for _, r := range s.sums[envA] {
		if r.FlagKey == "f" && r.Value == "true" && (!r.Start.Equal(noon.Add(1*time.Second)) || !r.End.Equal(noon.Add(2*time.Second))) {
			t.Errorf("row f=true spans %s to %s, want 12:00:01 to 12:00:02", r.Start, r.End)
		}
	}
	if s.wrongKeys != 0 || dropped.Load() != 0 {
		t.Errorf("%d batches with a key of another environment, %d dropped", s.wrongKeys, dropped.Load())
	}
}

// Memory 0 records every evaluation as an impression, as before summaries.
func TestZeroMemoryIsOneImpressionPerEvaluation(t *testing.T) {
	e, s := newRecorder(t, ExposuresConfig{Now: (&clock{now: noon}).Now})
	p := keyOf(envA, 1, false)
	for range 3 {
		e.Record(p, "f", "u", "true")
	}
	e.Close()
	if got := s.triples(envA); len(got) != 3 || len(s.sums[envA]) != 0 {
		t.Errorf("impressions %v and summaries %v, want 3 impressions and no summary", got, s.sums[envA])
	}
}

// A summary row never spans two UTC days: the statistics file it under the
// day of its end.
func TestSummaryRowsSplitAtUTCMidnight(t *testing.T) {
	midnight := time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)
	c := &clock{}
	e, s := newRecorder(t, ExposuresConfig{Memory: 10, Now: c.Now})
	p := keyOf(envA, 1, false)
	for _, at := range []time.Time{midnight.Add(-time.Minute), midnight.Add(-time.Second), midnight.Add(-time.Microsecond),
		midnight.Add(-time.Nanosecond), midnight, midnight.Add(time.Second)} {
		c.Set(at)
		e.Record(p, "f", "u", "true")
	}
	e.Close()
	type row struct {
		Count      int64
		Start, End time.Time
	}
	var got []row
	for _, r := range s.sums[envA] {
		got = append(got, row{r.Count, r.Start, r.End})
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Start.Before(got[j].Start) })
	// The first evaluation is the impression; times are in microseconds,
	// as PostgreSQL stores them, so 1 ns before midnight is the day before.
	want := []row{
		{3, midnight.Add(-time.Second), midnight.Add(-time.Microsecond)},
		{2, midnight, midnight.Add(time.Second)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("summary rows (-want +got):\n%s", d)
	}
}

// An exposure forgotten to make room is an impression again when seen
// again: the user counts once, the evaluation once, as it should.
func TestEvictedExposureIsAnotherImpression(t *testing.T) {
	e, s := newRecorder(t, ExposuresConfig{Memory: 2, Now: (&clock{now: noon}).Now})
	p := keyOf(envA, 1, false)
	for _, u := range []string{"a", "b", "a", "c", "b", "a"} { // c evicts b, b evicts a
		e.Record(p, "f", u, "v")
	}
	e.Close()
	want := []triple{{"f", "a", "v"}, {"f", "b", "v"}, {"f", "c", "v"}, {"f", "b", "v"}, {"f", "a", "v"}}
	if d := cmp.Diff(want, s.triples(envA)); d != "" {
		t.Errorf("impressions (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{"f=v": 1}, s.counts(envA)); d != "" {
		t.Errorf("summary counts (-want +got):\n%s", d)
	}
}

// A full queue drops and counts: an impression (whose exposure stays new,
// so that its user is recorded at the next evaluation), and a summary count
// that needs a new row while SummaryRows wait; a count into a waiting row
// always fits. After Close everything is dropped and counted.
func TestFullQueuesDropAndCount(t *testing.T) {
	var dropped atomic.Int64
	e, s := newRecorder(t, ExposuresConfig{Memory: 100, QueueSize: 2, SummaryRows: 1,
		Now: (&clock{now: noon}).Now, Dropped: func() { dropped.Add(1) }})
	p := keyOf(envA, 1, false)
	e.Record(p, "f", "u1", "v")
	e.Record(p, "f", "u2", "v")
	e.Record(p, "f", "u3", "v") // queue full: dropped
	if dropped.Load() != 1 {
		t.Fatalf("dropped %d, want 1", dropped.Load())
	}
	e.Record(p, "f", "u1", "v") // the one row
	e.Record(p, "f", "u2", "v") // into it
	e.Record(p, "g", "u1", "x") // queue still full: dropped
	e.Record(p, "f", "u1", "w") // dropped
	if dropped.Load() != 3 {
		t.Fatalf("dropped %d, want 3", dropped.Load())
	}
	e.flush(true)               // what the loop does every interval
	e.Record(p, "f", "u3", "v") // not remembered: an impression now
	e.Record(p, "f", "u1", "v") // a new row
	e.Record(p, "g", "u1", "x") // an impression
	e.Record(p, "g", "u1", "x") // a second row while one waits: dropped
	if dropped.Load() != 4 {
		t.Fatalf("dropped %d, want 4", dropped.Load())
	}
	e.Close()
	e.Record(p, "f", "u1", "v") // after Close: dropped
	e.Record(p, "f", "u9", "v")
	if dropped.Load() != 6 {
		t.Fatalf("dropped %d after Close, want 6", dropped.Load())
	}
	want := []triple{{"f", "u1", "v"}, {"f", "u2", "v"}, {"f", "u3", "v"}, {"g", "u1", "x"}}
	if d := cmp.Diff(want, s.triples(envA)); d != "" {
		t.Errorf("impressions (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{"f=v": 3}, s.counts(envA)); d != "" {
		t.Errorf("summary counts (-want +got):\n%s", d)
	}
}

// Impressions the database did not take are lost, and their exposures
// forgotten: the user's next evaluation is an impression again.
func TestFailedImpressionsAreForgotten(t *testing.T) {
	e, s := newRecorder(t, ExposuresConfig{Memory: 100, Now: (&clock{now: noon}).Now})
	p := keyOf(envA, 1, false)
	s.failImps.Store(true)
	e.Record(p, "f", "u1", "v")
	e.flush(true)
	s.failImps.Store(false)
	e.Record(p, "f", "u1", "v")
	e.Record(p, "f", "u1", "v")
	e.Close()
	if d := cmp.Diff([]triple{{"f", "u1", "v"}}, s.triples(envA)); d != "" {
		t.Errorf("impressions (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{"f=v": 1}, s.counts(envA)); d != "" {
		t.Errorf("summary counts (-want +got):\n%s", d)
	}
}

// With a sharded memory, a row's evaluations wait in the shards of their
// users' exposures; a flush writes them as one row, from the first
// evaluation to the last.
func TestShardedRowsAreMergedAtFlush(t *testing.T) {
	c := &clock{}
	e, s := newRecorder(t, ExposuresConfig{Memory: memoryShardedAbove, Now: c.Now})
	if e.seen.shardCount() < 2 {
		t.Fatalf("%d shards", e.seen.shardCount())
	}
	p := keyOf(envA, 1, false)
	const users = 200
	for round := range 3 {
		for u := range users {
			c.Set(noon.Add(time.Duration(round*users+u) * time.Millisecond))
			e.Record(p, "f", fmt.Sprint("u", u), "v")
		}
	}
	e.Close()
	rows := s.sums[envA]
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1: %+v", len(rows), rows)
	}
	r := rows[0]
	if r.Count != 2*users || !r.Start.Equal(noon.Add(users*time.Millisecond)) || !r.End.Equal(noon.Add((3*users-1)*time.Millisecond)) {
		t.Errorf("row %+v, want %d evaluations from the second round's first to the last", r, 2*users)
	}
	if n := e.rows.Load(); n != 0 {
		t.Errorf("%d rows still counted as waiting", n)
	}
}

// A full batch of impressions is written at once, without waiting for the
// interval, and no batch is larger than the ingest routes take.
func TestFullBatchIsWrittenAtOnce(t *testing.T) {
	e, s := newRecorder(t, ExposuresConfig{Memory: 10_000, Now: (&clock{now: noon}).Now})
	defer e.Close()
	p := keyOf(envA, 1, false)
	for i := range measure.MaxBatchItems + 10 {
		e.Record(p, "f", fmt.Sprint("u", i), "v")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(s.triples(envA)) < measure.MaxBatchItems {
		if time.Now().After(deadline) {
			t.Fatalf("%d impressions written, want a batch of %d at once", len(s.triples(envA)), measure.MaxBatchItems)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.batches {
		if n > measure.MaxBatchItems {
			t.Errorf("a batch of %d", n)
		}
	}
}

// Concurrent evaluations are each recorded exactly once: impressions plus
// summary counts equal the evaluations, every exposure has an impression,
// and with a memory that holds them all, exactly one.
func TestConcurrentEvaluationsAreRecordedOnce(t *testing.T) {
	for _, memory := range []int{0, 7, 1000, memoryShardedAbove} {
		t.Run(fmt.Sprint("memory ", memory), func(t *testing.T) {
			e, s := newRecorder(t, ExposuresConfig{Memory: memory, QueueSize: 1 << 20, FlushInterval: time.Millisecond})
			const workers, each = 8, 2000
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 1))
					p := keyOf([]uuid.UUID{envA, envB}[w%2], int64(w), w%4 < 2)
					for range each {
						e.Record(p, "f", fmt.Sprint("u", rng.IntN(30)), fmt.Sprint(rng.IntN(2)))
					}
				}()
			}
			wg.Wait()
			e.Close()
			var total int64
			for _, env := range []uuid.UUID{envA, envB} {
				imps := s.triples(env)
				total += int64(len(imps))
				distinct := map[triple]bool{}
				for _, x := range imps {
					distinct[x] = true
				}
				for _, n := range s.counts(env) {
					total += n
				}
				if memory >= 1000 && len(distinct) != len(imps) {
					t.Errorf("%d impressions of %d exposures: a memory that holds them all records each once", len(imps), len(distinct))
				}
			}
			if total != workers*each || s.wrongKeys != 0 {
				t.Errorf("recorded %d evaluations of %d (%d batches with a wrong key)", total, workers*each, s.wrongKeys)
			}
		})
	}
}

// What recording a repeat evaluation costs the request: the memory's
// lookup and a summary count.
func BenchmarkRecordRepeat(b *testing.B) {
	e := NewExposures(newSink(), ExposuresConfig{Memory: DefaultExposureMemory, FlushInterval: time.Hour})
	e.Start()
	defer e.Close()
	p := keyOf(envA, 1, false)
	users := make([]string, 2000)
	for i := range users {
		users[i] = fmt.Sprintf("user-%04d", i)
		e.Record(p, "snapshot-flag-007", users[i], "true")
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e.Record(p, "snapshot-flag-007", users[i%len(users)], "true")
		i++
	}
}
