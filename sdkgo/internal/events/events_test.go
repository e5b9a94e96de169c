package events

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type sink struct {
	mu      sync.Mutex
	batches map[string][]int
}

func (s *sink) post(_ context.Context, kind string, body []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches[kind] = append(s.batches[kind], len(items))
	return nil
}

func TestBatchesOfAtMost500AndFlushOnClose(t *testing.T) {
	s := &sink{batches: map[string][]int{}}
	q := New(Config{Capacity: 5000, FlushInterval: time.Hour, Post: s.post, Ready: func() bool { return true }})
	for i := 0; i < 1201; i++ {
		q.Impression(Impression{FlagKey: "f", Value: "true"})
	}
	q.Goal(Goal{EventKey: "buy"})
	q.Close(context.Background())
	total := 0
	for _, n := range s.batches[KindImpressions] {
		if n > 500 {
			t.Errorf("batch of %d impressions", n)
		}
		total += n
	}
	if total != 1201 || len(s.batches[KindEvents]) != 1 || q.Dropped() != 0 || q.Sent() != 1202 {
		t.Errorf("impressions %v, events %v, dropped %d, sent %d", s.batches[KindImpressions], s.batches[KindEvents], q.Dropped(), q.Sent())
	}
}

func TestFullQueueDropsInsteadOfBlocking(t *testing.T) {
	block := make(chan struct{})
	q := New(Config{Capacity: 10, FlushInterval: time.Hour, Ready: func() bool { return true },
		Post: func(context.Context, string, []byte) error { <-block; return nil }})
	start := time.Now()
	for i := 0; i < 10_000; i++ {
		q.Impression(Impression{FlagKey: "f"})
	}
	if time.Since(start) > time.Second {
		t.Error("queueing blocked")
	}
	if q.Dropped() == 0 {
		t.Error("nothing was dropped from a full queue")
	}
	close(block)
	q.Close(context.Background())
}

// recorder is a Post that keeps every batch it accepts, and refuses the
// kinds in fail.
type recorder struct {
	mu    sync.Mutex
	imps  [][]Impression
	sums  [][]Summary
	goals int
	fail  map[string]bool
}

func (r *recorder) post(_ context.Context, kind string, body []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail[kind] {
		return errors.New("refused")
	}
	switch kind {
	case KindImpressions:
		var b []Impression
		if err := json.Unmarshal(body, &b); err != nil {
			return err
		}
		r.imps = append(r.imps, b)
	case KindSummaries:
		var b []Summary
		if err := json.Unmarshal(body, &b); err != nil {
			return err
		}
		r.sums = append(r.sums, b)
	case KindEvents:
		r.goals++
	}
	return nil
}

func (r *recorder) summaries() []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []Summary
	for _, b := range r.sums {
		all = append(all, b...)
	}
	return all
}

func ready() bool { return true }

func TestSummariesAggregatePerFlagValueAndUTCDay(t *testing.T) {
	r := &recorder{}
	q := New(Config{FlushInterval: time.Hour, Post: r.post, Ready: ready})
	day := time.Date(2025, 3, 1, 23, 59, 58, 0, time.UTC)
	q.Summarise("f", "true", day.Add(time.Second))
	q.Summarise("f", "true", day) // earlier, arriving later
	q.Summarise("f", "false", day)
	q.Summarise("f", "true", day.Add(3*time.Second)) // the next UTC day
	q.Summarise("g", "true", day)
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := r.summaries()
	slices.SortFunc(got, func(a, b Summary) int {
		return cmp.Or(strings.Compare(a.FlagKey, b.FlagKey), strings.Compare(a.Value, b.Value), a.Start.Compare(b.Start))
	})
	want := []Summary{
		{"f", "false", 1, day, day},
		{"f", "true", 2, day, day.Add(time.Second)},
		{"f", "true", 1, day.Add(3 * time.Second), day.Add(3 * time.Second)},
		{"g", "true", 1, day, day},
	}
	if !slices.EqualFunc(got, want, func(a, b Summary) bool {
		return a.FlagKey == b.FlagKey && a.Value == b.Value && a.Count == b.Count && a.Start.Equal(b.Start) && a.End.Equal(b.End)
	}) {
		t.Errorf("summaries\n got %+v\nwant %+v", got, want)
	}
	c := q.Counters()
	if c.Summarised != 5 || c.SummarisedSent != 5 || c.SummaryRowsSent != 4 || c.SummarisedDropped != 0 {
		t.Errorf("counters %+v", c)
	}
	// A second flush sends only what came since.
	q.Summarise("f", "true", day)
	q.Close(context.Background())
	if n := len(r.summaries()); n != 5 {
		t.Errorf("%d rows after Close, want 5", n)
	}
}

func TestSummaryBatchesOfAtMost500(t *testing.T) {
	r := &recorder{}
	q := New(Config{FlushInterval: time.Hour, Post: r.post, Ready: ready})
	now := time.Now()
	for i := range 1201 {
		q.Summarise(fmt.Sprint("f", i), "v", now)
		q.Summarise(fmt.Sprint("f", i), "v", now)
	}
	q.Close(context.Background())
	var total, rows int64
	for _, b := range r.sums {
		rows += int64(len(b))
		if len(b) > 500 {
			t.Errorf("a batch of %d summaries", len(b))
		}
		for _, s := range b {
			total += s.Count
		}
	}
	// 500 rows waiting trigger a flush, which may split a (flag, value)
	// between two windows: at least 1201 rows.
	if c := q.Counters(); total != 2402 || c.SummarisedSent != 2402 || c.SummaryRowsSent != rows || rows < 1201 {
		t.Errorf("%d evaluations in summaries, counters %+v", total, c)
	}
}

func TestSummaryCapacityDropsAndCounts(t *testing.T) {
	r := &recorder{}
	q := New(Config{SummaryCapacity: 2, FlushInterval: time.Hour, Post: r.post, Ready: ready})
	now := time.Now()
	q.Summarise("a", "v", now)
	q.Summarise("b", "v", now)
	q.Summarise("c", "v", now) // a third row: dropped
	q.Summarise("a", "v", now) // an existing row still counts
	q.Close(context.Background())
	if c := q.Counters(); c.Summarised != 4 || c.SummarisedSent != 3 || c.SummarisedDropped != 1 {
		t.Errorf("counters %+v", c)
	}
}

func TestRefusedImpressionsAreUnsentAndCounted(t *testing.T) {
	r := &recorder{fail: map[string]bool{KindImpressions: true, KindSummaries: true}}
	var unsent []Impression
	q := New(Config{FlushInterval: time.Hour, Post: r.post, Ready: ready,
		Unsent: func(i []Impression) { unsent = append(unsent, i...) }})
	u := "u1"
	q.Impression(Impression{FlagKey: "f", UserID: &u, Value: "true"})
	q.Summarise("f", "true", time.Now())
	q.Summarise("f", "true", time.Now())
	if err := q.Flush(context.Background()); err == nil {
		t.Error("Flush must report refused batches")
	}
	q.Close(context.Background())
	c := q.Counters()
	if len(unsent) != 1 || unsent[0].FlagKey != "f" || c.ImpressionsDropped != 1 || c.ImpressionsSent != 0 || c.SummarisedDropped != 2 {
		t.Errorf("unsent %v, counters %+v", unsent, c)
	}
}

func TestNothingSentBeforeReadyAndLeftoversCountedAtClose(t *testing.T) {
	r := &recorder{}
	var unsent int
	q := New(Config{FlushInterval: time.Hour, Post: r.post, Ready: func() bool { return false },
		Unsent: func(i []Impression) { unsent += len(i) }})
	q.Impression(Impression{FlagKey: "f"})
	q.Summarise("f", "v", time.Now())
	if err := q.Flush(context.Background()); !errors.Is(err, ErrNotReady) {
		t.Errorf("Flush before ready = %v", err)
	}
	q.Close(context.Background())
	c := q.Counters()
	if len(r.imps)+len(r.sums) != 0 || unsent != 1 || c.ImpressionsDropped != 1 || c.SummarisedDropped != 1 {
		t.Errorf("sent %d+%d batches, unsent %d, counters %+v", len(r.imps), len(r.sums), unsent, c)
	}
}

func TestReportsAfterCloseAreDroppedAndCounted(t *testing.T) {
	r := &recorder{}
	q := New(Config{FlushInterval: time.Hour, Post: r.post, Ready: ready})
	q.Close(context.Background())
	if q.Impression(Impression{FlagKey: "f"}) {
		t.Error("an impression after Close was queued")
	}
	q.Summarise("f", "v", time.Now())
	q.Goal(Goal{EventKey: "e"})
	if err := q.Flush(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v", err)
	}
	if c := q.Counters(); c.ImpressionsDropped != 1 || c.SummarisedDropped != 1 || c.Dropped != 2 {
		t.Errorf("counters %+v", c)
	}
}

// TestFlushCoversEverythingReportedBefore: what was reported before Flush
// began is acknowledged when it returns (the ordering the server's "a read
// after the acknowledgement sees everything" builds on).
func TestFlushCoversEverythingReportedBefore(t *testing.T) {
	r := &recorder{}
	q := New(Config{FlushInterval: time.Hour, Post: r.post, Ready: ready})
	defer q.Close(context.Background())
	for i := range 1234 {
		q.Impression(Impression{FlagKey: "f", Value: fmt.Sprint(i)})
		q.Summarise("f", "v", time.Now())
	}
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := q.Counters(); c.ImpressionsSent != 1234 || c.SummarisedSent != 1234 {
		t.Errorf("after Flush: counters %+v", c)
	}
}
