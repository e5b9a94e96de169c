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
// keeps the eviction order exactly least recently used.
const (
	memoryShardedAbove = 1 << 14
	memoryShards       = 16
)

// memory remembers the exposures recently reported as impressions: a
// bounded, sharded LRU of exposureKeys, as the Go SDK keeps
// (sdkgo.WithExposureMemory), with the environment in the key because one
// server records every environment. Forgetting is always safe: an exposure
// seen again after it was forgotten becomes a second impression of the same
// user, which the statistics count once as a user and once as an
// evaluation, exactly like the evaluation it stands for.
type memory struct {
	seeds  [2]maphash.Seed
	shards []memoryShard
}

type memoryNode struct {
	key        exposureKey
	prev, next int32 // neighbours in recency order; -1 at the ends
}

// memoryShard is one independent LRU: index maps a key to its node; head is
// the most recently used node, tail the least; free lists reusable nodes.
type memoryShard struct {
	mu         sync.Mutex
	capacity   int
	index      map[exposureKey]int32
	nodes      []memoryNode
	free       []int32
	head, tail int32
}

// maxMemory is the largest capacity: node indexes are int32.
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
		m.shards[i] = memoryShard{capacity: c, index: make(map[exposureKey]int32), head: -1, tail: -1}
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

func (m *memory) shard(k exposureKey) *memoryShard { return &m.shards[k[1]%uint64(len(m.shards))] }

// observe runs report under the lock of k's shard, telling it whether k is
// remembered (and, if so, marking it most recently used). When k is not
// remembered and report returns true, k is remembered from then on, the
// least recently used key of the shard making room when it is full.
//
// Holding the lock across report makes "first" exact under concurrency: two
// evaluations of one exposure cannot both see it as new, and what report
// records (the evaluation's time, a queued impression) is ordered with the
// exposure's other reports. report must not block.
func (m *memory) observe(k exposureKey, report func(seen bool) (remember bool)) {
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

// forget drops k, if remembered, so that its next evaluation is an
// impression again: an impression that never reached the database must not
// leave its user unrecorded.
func (m *memory) forget(k exposureKey) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[k]; ok {
		s.unlink(i)
		delete(s.index, k)
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

func (s *memoryShard) add(k exposureKey) {
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
		s.nodes = append(s.nodes, memoryNode{})
		i = int32(len(s.nodes) - 1)
	}
	s.nodes[i] = memoryNode{key: k, prev: -1, next: -1}
	s.index[k] = i
	s.pushFront(i)
}

func (s *memoryShard) touch(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushFront(i)
}

func (s *memoryShard) pushFront(i int32) {
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

func (s *memoryShard) unlink(i int32) {
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
