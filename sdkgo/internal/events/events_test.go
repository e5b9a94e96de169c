package events

import (
	"context"
	"encoding/json"
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
