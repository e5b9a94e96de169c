// Package exposure remembers which (flag, user, value) triples the SDK has
// recently reported as impressions: a bounded, sharded LRU of 128-bit keys.
//
// It is what lets the SDK report each evaluation exactly once, as an
// impression the first time a triple is seen and as a summary count
// afterwards (docs/reference/measurement.md, Reporting once). Forgetting is always safe: a
// forgotten triple seen again becomes a second impression of the same user,
// which the server counts once as a user and once as an evaluation, exactly
// like the evaluation it stands for.
package exposure

import (
	"hash/maphash"
	"sync"
)

// EntryBytes bounds the memory one remembered triple costs: a 24-byte list
// node plus its entry in a Go map index (a 24-byte slot and a control byte,
// at a load between 7/16 and 7/8). TestMemoryPerEntry measures about 86 at a
// million entries. Memory grows with the triples actually seen, up to the
// capacity.
const EntryBytes = 100

// Key identifies a (flag, user, value) triple by two independent 64-bit
// hashes. Keeping hashes instead of the strings bounds an entry's size
// whatever the keys' lengths, and retains none of the caller's memory.
// Two triples collide with probability 2^-128 per pair (the seeds are random
// per process, so no input can aim at a collision); a collision would make
// an evaluation a summary count instead of a first impression.
type Key [2]uint64

// shardedAbove is the capacity from which the memory is split into shards,
// so concurrent evaluations of different users rarely share a lock; below
// it one shard keeps the eviction order exactly least recently used.
const (
	shardedAbove = 1 << 14
	shardCount   = 16
)

// Memory is the LRU. Its zero value is not usable; call New.
type Memory struct {
	seeds  [2]maphash.Seed
	shards []shard
}

type node struct {
	key        Key
	prev, next int32 // neighbours in recency order; -1 at the ends
}

// shard is one independent LRU: index maps a key to its node; head is the
// most recently used node, tail the least; free lists reusable nodes.
type shard struct {
	mu         sync.Mutex
	capacity   int
	index      map[Key]int32
	nodes      []node
	free       []int32
	head, tail int32
}

// New returns a memory of at most capacity triples; capacity 0 (or less)
// remembers nothing, so every triple is always new.
func New(capacity int) *Memory {
	// Node indexes are int32; no memory needs more than a billion entries.
	capacity = min(max(capacity, 0), 1<<30)
	n := 1
	if capacity >= shardedAbove {
		n = shardCount
	}
	m := &Memory{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, shards: make([]shard, n)}
	for i := range m.shards {
		// Split capacity exactly: the shards' capacities add up to it.
		c := capacity / n
		if i < capacity%n {
			c++
		}
		m.shards[i] = shard{capacity: c, index: make(map[Key]int32), head: -1, tail: -1}
	}
	return m
}

// triple is what a Key hashes: three strings, compared and hashed by
// content, so ("a", "b\x00c") and ("a\x00b", "c") stay distinct.
type triple struct{ flag, user, value string }

// KeyOf returns the key of a (flag, user, value) triple.
func (m *Memory) KeyOf(flag, user, value string) Key {
	t := triple{flag, user, value}
	return Key{maphash.Comparable(m.seeds[0], t), maphash.Comparable(m.seeds[1], t)}
}

func (m *Memory) shard(k Key) *shard { return &m.shards[k[1]%uint64(len(m.shards))] }

// Observe runs report under the lock of k's shard, telling it whether k is
// remembered (and, if so, marking it most recently used). When k is not
// remembered and report returns true, k is remembered from then on, the
// least recently used key of the shard making room when it is full.
//
// Holding the lock across report is what makes "first" exact under
// concurrency: two evaluations of one triple cannot both see it as new, and
// whatever report records (the evaluation's time, a queued impression) is
// ordered with the triple's other reports. report must not block.
func (m *Memory) Observe(k Key, report func(seen bool) (remember bool)) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[k]; ok {
		s.touch(i)
		report(true)
		return
	}
	if report(false) && s.capacity > 0 {
		s.add(k)
	}
}

// Forget drops k, if remembered: its next evaluation is reported as an
// impression again. The SDK forgets a triple whose impression never reached
// the server, so that the user is still recorded.
func (m *Memory) Forget(k Key) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[k]; ok {
		s.unlink(i)
		delete(s.index, k)
		s.free = append(s.free, i)
	}
}

// Len is the number of triples remembered.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.index)
		s.mu.Unlock()
	}
	return n
}

// Capacity is the most triples the memory holds.
func (m *Memory) Capacity() int {
	n := 0
	for i := range m.shards {
		n += m.shards[i].capacity
	}
	return n
}

func (s *shard) add(k Key) {
	var i int32
	switch {
	case len(s.index) >= s.capacity:
		// Full: the least recently used node makes room and is reused.
		i = s.tail
		s.unlink(i)
		delete(s.index, s.nodes[i].key)
	case len(s.free) > 0:
		i = s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
	default:
		s.nodes = append(s.nodes, node{})
		i = int32(len(s.nodes) - 1)
	}
	s.nodes[i] = node{key: k, prev: -1, next: -1}
	s.index[k] = i
	s.pushFront(i)
}

func (s *shard) touch(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushFront(i)
}

func (s *shard) pushFront(i int32) {
	n := &s.nodes[i]
	n.prev, n.next = -1, s.head
	if s.head >= 0 {
		s.nodes[s.head].prev = i
	}
	s.head = i
	if s.tail < 0 {
		s.tail = i
	}
}

func (s *shard) unlink(i int32) {
	n := &s.nodes[i]
	if n.prev >= 0 {
		s.nodes[n.prev].next = n.next
	} else {
		s.head = n.next
	}
	if n.next >= 0 {
		s.nodes[n.next].prev = n.prev
	} else {
		s.tail = n.prev
	}
	n.prev, n.next = -1, -1
}
