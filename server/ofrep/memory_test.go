package ofrep

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// observeKey reports whether k was remembered, remembering it when new.
func observeKey(m *memory, k exposureKey) (seen bool) {
	m.observe(k, func(s bool) bool { seen = s; return true })
	return seen
}

var envA, envB = uuid.MustParse("00000000-0000-0000-0000-00000000000a"), uuid.MustParse("00000000-0000-0000-0000-00000000000b")

func TestMemoryFirstThenSeen(t *testing.T) {
	m := newMemory(10)
	a, b := m.keyOf(envA, "f", "u1", "true"), m.keyOf(envA, "f", "u1", "false")
	if observeKey(m, a) || !observeKey(m, a) || observeKey(m, b) || !observeKey(m, b) {
		t.Fatal("an exposure must be new once, then seen")
	}
	if observeKey(m, m.keyOf(envB, "f", "u1", "true")) {
		t.Error("the same flag, user and value in another environment is another exposure")
	}
	for _, c := range [][2][3]string{
		{{"a", "b\x00c", "d"}, {"a\x00b", "c", "d"}},
		{{"ab", "c", "d"}, {"a", "bc", "d"}},
		{{"", "u", "v"}, {"u", "", "v"}},
	} {
		x, y := c[0], c[1]
		if m.keyOf(envA, x[0], x[1], x[2]) == m.keyOf(envA, y[0], y[1], y[2]) {
			t.Errorf("%q and %q share a key: keys must not depend on where the strings are split", x, y)
		}
	}
	if m.keyOf(envA, "f", "u", "v") != m.keyOf(envA, "f", "u", "v") {
		t.Error("keys must be deterministic")
	}
}

func TestMemoryNotRememberedWhenReportDeclines(t *testing.T) {
	m := newMemory(10)
	k := m.keyOf(envA, "f", "u", "v")
	m.observe(k, func(bool) bool { return false }) // the impression was dropped
	if observeKey(m, k) {
		t.Error("an exposure whose report declined must stay new")
	}
}

func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	m := newMemory(3)
	k := func(i int) exposureKey { return m.keyOf(envA, "f", fmt.Sprint("u", i), "v") }
	for i := range 3 {
		observeKey(m, k(i))
	}
	observeKey(m, k(0)) // 0 is now the most recent; 1 the least
	observeKey(m, k(3)) // evicts 1
	if m.len() != 3 {
		t.Fatalf("len = %d, want 3", m.len())
	}
	for _, c := range []struct {
		i    int
		seen bool
	}{{0, true}, {2, true}, {3, true}, {1, false}} {
		if got := observeKey(m, k(c.i)); got != c.seen {
			t.Errorf("u%d seen = %v, want %v", c.i, got, c.seen)
		}
	}
}

func TestMemoryForget(t *testing.T) {
	m := newMemory(2)
	a, b, c := m.keyOf(envA, "f", "a", "v"), m.keyOf(envA, "f", "b", "v"), m.keyOf(envA, "f", "c", "v")
	observeKey(m, a)
	observeKey(m, b)
	m.forget(a)
	m.forget(m.keyOf(envA, "f", "never", "v")) // unknown: no effect
	if m.len() != 1 || observeKey(m, a) {
		t.Fatalf("a forgotten exposure must be new again (len %d)", m.len())
	}
	observeKey(m, c) // full again (b, a): evicts b, reusing nodes
	if !observeKey(m, a) || !observeKey(m, c) || observeKey(m, b) {
		t.Error("eviction after forget went wrong")
	}
}

func TestMemoryZeroCapacityRemembersNothing(t *testing.T) {
	for _, capacity := range []int{0, -5} {
		m := newMemory(capacity)
		k := m.keyOf(envA, "f", "u", "v")
		if observeKey(m, k) || observeKey(m, k) || m.len() != 0 {
			t.Errorf("capacity %d: every evaluation must be new", capacity)
		}
	}
}

// Above the sharding threshold the shards' capacities add up to the
// configured one, and the memory never holds more.
func TestMemoryShardedCapacity(t *testing.T) {
	const capacity = memoryShardedAbove + 5
	m := newMemory(capacity)
	if len(m.shards) != memoryShards {
		t.Fatalf("%d shards, want %d", len(m.shards), memoryShards)
	}
	total := 0
	for i := range m.shards {
		total += m.shards[i].capacity
	}
	if total != capacity {
		t.Fatalf("shard capacities add up to %d, want %d", total, capacity)
	}
	for i := range 2 * capacity {
		observeKey(m, m.keyOf(envA, "f", fmt.Sprint("u", i), "v"))
	}
	if n := m.len(); n > capacity || n < capacity-memoryShards*64 {
		t.Errorf("holds %d exposures, want at most %d and about as many", n, capacity)
	}
}

func BenchmarkMemoryObserve(b *testing.B) {
	m := newMemory(1_000_000)
	users := make([]string, 2000)
	for i := range users {
		users[i] = fmt.Sprintf("user-%04d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		observeKey(m, m.keyOf(envA, "snapshot-flag-007", users[i%len(users)], "true"))
		i++
	}
}
