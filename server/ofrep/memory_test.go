package ofrep

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/google/uuid"
)

// observeKey reports whether k was remembered, remembering it when new.
func observeKey(m *memory, k exposureKey) (seen bool) {
	m.observe(k, func(_ int, s bool) bool { seen = s; return true })
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
	m.observe(k, func(int, bool) bool { return false }) // the impression was dropped
	if observeKey(m, k) {
		t.Error("an exposure whose report declined must stay new")
	}
}

// The clock: an exposure evaluated since it was added (or since the hand
// last passed it) is passed over once; the first that is not makes room.
func TestMemoryEvictsByClock(t *testing.T) {
	m := newMemory(3)
	k := func(i int) exposureKey { return m.keyOf(envA, "f", fmt.Sprint("u", i), "v") }
	for i := range 3 {
		observeKey(m, k(i))
	}
	observeKey(m, k(0)) // 0 evaluated again
	observeKey(m, k(3)) // passes over 0 (clearing its mark), takes 1's place
	if m.len() != 3 {
		t.Fatalf("len = %d, want 3", m.len())
	}
	for _, c := range []struct {
		i    int
		seen bool
	}{{0, true}, {2, true}, {3, true}, {1, false}} { // 1 comes back, in 2's place
		if got := observeKey(m, k(c.i)); got != c.seen {
			t.Errorf("u%d seen = %v, want %v", c.i, got, c.seen)
		}
	}
	// The hand went round once to make room for 1: every mark is clear,
	// and the hand is back at 0's place, which u4 takes.
	observeKey(m, k(4))
	for _, c := range []struct {
		i    int
		seen bool
	}{{3, true}, {1, true}, {4, true}, {0, false}} {
		if got := observeKey(m, k(c.i)); got != c.seen {
			t.Errorf("after u4: u%d seen = %v, want %v", c.i, got, c.seen)
		}
	}
}

// Two exposures whose first halves agree (one pair in 2^64) are told apart,
// and the newer takes the older's place.
func TestMemoryFirstHalfCollision(t *testing.T) {
	m := newMemory(10)
	a, b := exposureKey{5, 7}, exposureKey{5, 9}
	if observeKey(m, a) || observeKey(m, b) {
		t.Fatal("two exposures must be new")
	}
	if !observeKey(m, b) || observeKey(m, a) {
		t.Error("the newer must be remembered, in place of the older")
	}
	if m.len() != 1 {
		t.Errorf("len = %d, want 1", m.len())
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
	observeKey(m, c) // full again (b, a): the hand passes over b, evaluated, and takes a's place
	if !observeKey(m, b) || !observeKey(m, c) || observeKey(m, a) {
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
	if n := m.len(); n != capacity {
		t.Errorf("holds %d exposures, want %d", n, capacity)
	}
}

// What a remembered exposure costs (docs/reference/ofrep.md, Impressions,
// says about 100 bytes at most) with the default memory full.
func TestMemoryPerEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a million entries")
	}
	const n = DefaultExposureMemory
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := newMemory(n)
	for i := range n {
		observeKey(m, exposureKey{uint64(i) * 0x9e3779b97f4a7c15, uint64(i)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.1f bytes per exposure at %d", per, n)
	if per > 100 {
		t.Errorf("%.1f bytes per exposure, more than the 100 documented", per)
	}
	runtime.KeepAlive(m)
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
