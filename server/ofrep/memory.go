package ofrep

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/google/uuid"
)

// exposureKey identifies an (environment, flag, user, value) exposure by two
// independent 64-bit hashes: an entry's size stays bounded whatever the
// keys' lengths, and the memory keeps none of a request's strings. Two
// exposures collide with probability 2^-128 per pair (the seeds are random
// per process, so no input can aim at a collision); a collision would make
// an evaluation a summary count instead of a first impression.
type exposureKey [2]uint64

// The memory is split into shards above this capacity, so that concurrent
// evaluations of different users rarely share a lock; below it one shard
// keeps one eviction order for every exposure.
const (
	memoryShardedAbove = 1 << 14
	memoryShards       = 16
)

// memory remembers the exposures recently reported as impressions, as the
// Go SDK does (sdkgo.WithExposureMemory), with the environment in the key
// because one server records every environment. It is bounded and sharded,
// and forgets by the second-chance ("clock") approximation of least
// recently used: an exposure evaluated since the clock hand last passed it
// is passed over once, and one never evaluated again since it was added is
// the first to go. A hit only reads its entry (and sets its mark when
// clear), where a list kept in exact recency order would rewrite up to four
// entries scattered in memory on every evaluation; on a busy server those
// are cache misses of every request.
//
// Forgetting is always safe: an exposure seen again after it was forgotten
// becomes a second impression of the same user, which the statistics count
// once as a user and once as an evaluation, exactly like the evaluation it
// stands for.
type memory struct {
	seeds  [2]maphash.Seed
	shards []memoryShard
}

// memoryEntry is one remembered exposure, unless the index no longer
// points to it (it is then on the free list).
type memoryEntry struct {
	key      exposureKey
	recently bool // evaluated since the clock hand last passed
}

// memoryShard is one independent memory: index maps the first half of a
// key to its entry (the map's fast path for 64-bit keys; the entry holds
// the whole key), hand is the clock hand, free lists entries to reuse.
type memoryShard struct {
	mu       sync.Mutex
	capacity int
	index    map[uint64]int32
	entries  []memoryEntry
	free     []int32
	hand     int
}

// maxMemory is the largest capacity: entry indexes are int32.
const maxMemory = 1 << 30

// newMemory returns a memory of at most capacity exposures; 0 remembers
// nothing, so that every evaluation is a first exposure.
func newMemory(capacity int) *memory {
	capacity = min(max(capacity, 0), maxMemory)
	n := 1
	if capacity >= memoryShardedAbove {
		n = memoryShards
	}
	m := &memory{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, shards: make([]memoryShard, n)}
	for i := range m.shards {
		// The shards' capacities add up to capacity exactly.
		c := capacity / n
		if i < capacity%n {
			c++
		}
		m.shards[i] = memoryShard{capacity: c, index: make(map[uint64]int32)}
	}
	return m
}

// keyOf returns the key of an exposure: both hashes of one encoding, in
// which each string follows its length, so that ("a", "b\x00c") and
// ("a\x00b", "c") stay distinct. The usual exposure encodes on the stack.
func (m *memory) keyOf(env uuid.UUID, flag, user, value string) exposureKey {
	var buf [256]byte
	b := append(buf[:0], env[:]...)
	for _, s := range [3]string{flag, user, value} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return exposureKey{maphash.Bytes(m.seeds[0], b), maphash.Bytes(m.seeds[1], b)}
}

// shardOf is the index of k's shard.
func (m *memory) shardOf(k exposureKey) int { return int(k[1] % uint64(len(m.shards))) }

func (m *memory) shard(k exposureKey) *memoryShard { return &m.shards[m.shardOf(k)] }

// observe runs report under the lock of k's shard (numbered shard), telling
// it whether k is remembered (and, if so, marking it recently evaluated).
// When k is not remembered and report returns true, k is remembered from
// then on, the clock making room when the shard is full.
//
// Holding the lock across report makes "first" exact under concurrency: two
// evaluations of one exposure cannot both see it as new, and what report
// records (the evaluation's time, a queued impression) is ordered with the
// exposure's other reports. report must not block.
func (m *memory) observe(k exposureKey, report func(shard int, seen bool) (remember bool)) {
	i := m.shardOf(k)
	s := &m.shards[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.index[k[0]]; ok && s.entries[j].key == k {
		if e := &s.entries[j]; !e.recently {
			e.recently = true
		}
		report(i, true)
		return
	}
	if report(i, false) && s.capacity > 0 {
		s.add(k)
	}
}

// shardCount is the number of shards.
func (m *memory) shardCount() int { return len(m.shards) }

// locked runs f under the lock of shard i: what report keeps per shard is
// read under it.
func (m *memory) locked(i int, f func()) {
	s := &m.shards[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// forget drops k, if remembered, so that its next evaluation is an
// impression again: an impression that never reached the database must not
// leave its user unrecorded.
func (m *memory) forget(k exposureKey) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[k[0]]; ok && s.entries[i].key == k {
		delete(s.index, k[0])
		s.entries[i] = memoryEntry{}
		s.free = append(s.free, i)
	}
}

// len is the number of exposures remembered.
func (m *memory) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.index)
		s.mu.Unlock()
	}
	return n
}

// add remembers k, which is not remembered.
func (s *memoryShard) add(k exposureKey) {
	var i int32
	if j, ok := s.index[k[0]]; ok {
		// Another exposure with the same first half (one in 2^64): k takes
		// its place, and that one is forgotten.
		i = j
	} else {
		switch {
		case len(s.free) > 0:
			i = s.free[len(s.free)-1]
			s.free = s.free[:len(s.free)-1]
		case len(s.entries) < s.capacity:
			s.entries = append(s.entries, memoryEntry{})
			i = int32(len(s.entries) - 1)
		default:
			// Full, so no entry is free: the hand passes over the
			// recently evaluated, clearing their marks, and stops at the
			// first that is not, which makes room.
			for s.entries[s.hand].recently {
				s.entries[s.hand].recently = false
				s.hand = (s.hand + 1) % len(s.entries)
			}
			i = int32(s.hand)
			s.hand = (s.hand + 1) % len(s.entries)
			delete(s.index, s.entries[i].key[0])
		}
	}
	s.entries[i] = memoryEntry{key: k}
	s.index[k[0]] = i
}
