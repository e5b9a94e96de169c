// Package store is the SDK's flag store: an immutable compiled snapshot
// swapped atomically, so evaluations never lock and never see a half-built
// state.
package store

import (
	"sync"
	"sync/atomic"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// Store holds the flags evaluations read.
type Store struct {
	cur   atomic.Pointer[eval.Snapshot]
	envID atomic.Pointer[string]

	mu      sync.Mutex // serialises writers
	pending map[string]eval.Flag
	filling bool
}

// Snapshot returns the flags to evaluate against; never nil.
func (s *Store) Snapshot() *eval.Snapshot {
	if p := s.cur.Load(); p != nil {
		return p
	}
	return eval.Compile(nil)
}

// EnvironmentID is the environment learned from the stream or the
// snapshot, "" until known.
func (s *Store) EnvironmentID() string {
	if p := s.envID.Load(); p != nil {
		return *p
	}
	return ""
}

// SetEnvironmentID records the environment.
func (s *Store) SetEnvironmentID(id string) {
	if id != "" {
		s.envID.Store(&id)
	}
}

// Begin starts a fresh store on `connected`. It fills from the replay and
// replaces the current one at Ready; until then evaluations keep using the
// old flags, which equals the clear-and-rebuild of docs/reference/stream.md,
// Reconnect, without a window of empty answers.
func (s *Store) Begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending, s.filling = map[string]eval.Flag{}, true
}

// Ready installs the replayed flags.
func (s *Store) Ready() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.filling {
		return
	}
	flags := make([]eval.Flag, 0, len(s.pending))
	for _, f := range s.pending {
		flags = append(flags, f)
	}
	s.cur.Store(eval.Compile(flags))
	s.pending, s.filling = nil, false
}

// Upsert applies an UPSERT. Live updates are applied only when newer than
// the flag held (docs/reference/flags.md, Version), so reordered updates are
// harmless.
func (s *Store) Upsert(f eval.Flag) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.filling {
		if old, ok := s.pending[f.Key]; !ok || f.Version > old.Version {
			s.pending[f.Key] = f
		}
		return
	}
	cur := s.Snapshot()
	if old, ok := cur.Flag(f.Key); ok && old.Version >= f.Version {
		return
	}
	s.cur.Store(cur.Upsert(f))
}

// Delete applies a DELETE.
func (s *Store) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.filling {
		delete(s.pending, key)
		return
	}
	s.cur.Store(s.Snapshot().Delete(key))
}

// Replace installs a whole new set of flags (from the snapshot endpoint).
func (s *Store) Replace(flags []eval.Flag) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.Store(eval.Compile(flags))
}
