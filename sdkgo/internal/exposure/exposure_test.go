package exposure

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// observe reports whether k was seen, remembering it when new.
func observe(m *Memory, k Key) (seen bool) {
	m.Observe(k, func(s bool) bool { seen = s; return true })
	return seen
}

func TestFirstThenSeen(t *testing.T) {
	m := New(10)
	a, b := m.KeyOf("f", "u1", "true"), m.KeyOf("f", "u1", "false")
	if observe(m, a) || !observe(m, a) || observe(m, b) || !observe(m, b) {
		t.Fatal("a triple must be new once, then seen")
	}
	if m.KeyOf("a", "b\x00c", "d") == m.KeyOf("a\x00b", "c", "d") {
		t.Error("keys must not depend on where the strings are split")
	}
	if m.KeyOf("f", "u", "v") != m.KeyOf("f", "u", "v") {
		t.Error("keys must be deterministic")
	}
}

func TestNotRememberedWhenReportDeclines(t *testing.T) {
	m := New(10)
	k := m.KeyOf("f", "u", "v")
	m.Observe(k, func(bool) bool { return false }) // e.g. the impression was dropped
	if observe(m, k) {
		t.Error("a triple whose report declined must stay new")
	}
}

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	m := New(3)
	k := func(i int) Key { return m.KeyOf("f", fmt.Sprint("u", i), "v") }
	for i := range 3 {
		observe(m, k(i))
	}
	observe(m, k(0)) // 0 is now the most recent; 1 is the least
	observe(m, k(3)) // evicts 1
	if m.Len() != 3 {
		t.Fatalf("len = %d, want 3", m.Len())
	}
	for _, c := range []struct {
		i    int
		seen bool
	}{{0, true}, {2, true}, {3, true}, {1, false}} {
		if got := observe(m, k(c.i)); got != c.seen {
			t.Errorf("u%d seen = %v, want %v", c.i, got, c.seen)
		}
	}
}

func TestForget(t *testing.T) {
	m := New(2)
	a, b, c := m.KeyOf("f", "a", "v"), m.KeyOf("f", "b", "v"), m.KeyOf("f", "c", "v")
	observe(m, a)
	observe(m, b)
	m.Forget(a)
	m.Forget(m.KeyOf("f", "never", "v")) // unknown: no effect
	if m.Len() != 1 || observe(m, a) {
		t.Fatalf("a forgotten triple must be new again (len %d)", m.Len())
	}
	observe(m, c) // full again (b, a): evicts b, reusing nodes
	if !observe(m, a) || !observe(m, c) || observe(m, b) {
		t.Error("eviction after forget went wrong")
	}
}

func TestZeroCapacityRemembersNothing(t *testing.T) {
	m := New(0)
	k := m.KeyOf("f", "u", "v")
	if observe(m, k) || observe(m, k) || m.Len() != 0 {
		t.Error("capacity 0 must treat every triple as new")
	}
}

func TestBoundedWhenSharded(t *testing.T) {
	const capacity = shardedAbove + 7
	m := New(capacity)
	if len(m.shards) != shardCount || m.Capacity() != capacity {
		t.Fatalf("%d shards, capacity %d", len(m.shards), m.Capacity())
	}
	for i := range 5 * capacity {
		observe(m, m.KeyOf("f", fmt.Sprint(i), "v"))
	}
	if m.Len() != capacity {
		t.Errorf("len = %d, want the capacity %d", m.Len(), capacity)
	}
	// The most recent keys are all still there (each shard keeps its own
	// most recent ones; a shard's share is at least capacity/16).
	for i := 5*capacity - capacity/shardCount/2; i < 5*capacity; i++ {
		if !observe(m, m.KeyOf("f", fmt.Sprint(i), "v")) {
			t.Fatalf("recent key %d was evicted", i)
		}
	}
}

// TestConcurrentFirstIsExactlyOnce: many goroutines observing the same
// triples; each triple is new for exactly one of them.
func TestConcurrentFirstIsExactlyOnce(t *testing.T) {
	m := New(1 << 16)
	const triples, workers = 1000, 8
	var firsts atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range triples {
				if !observe(m, m.KeyOf("f", fmt.Sprint(i), "v")) {
					firsts.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if firsts.Load() != triples {
		t.Errorf("%d first observations, want %d", firsts.Load(), triples)
	}
}

// TestMemoryPerEntry checks EntryBytes, the figure docs/sdk.md quotes.
func TestMemoryPerEntry(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures the heap; not under -short or -race")
	}
	const n = 1_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := New(n)
	for i := range n {
		observe(m, Key{uint64(i) * 0x9e3779b97f4a7c15, uint64(i)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.1f bytes per entry at %d entries", per, n)
	if per > EntryBytes {
		t.Errorf("%.1f bytes per entry, more than EntryBytes (%d)", per, EntryBytes)
	}
	runtime.KeepAlive(m)
}
