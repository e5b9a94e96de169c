package eval

import (
	"slices"
	"strings"
)

// Snapshot is an immutable, compiled set of flags: the flags of one environment as an SDK
// holds them at one moment. Evaluate reads it without locks, so any number of goroutines may
// evaluate against the same Snapshot. Upsert and Delete never change a Snapshot: they return
// a new one (copy-on-write), so a reader holding a *Snapshot is never affected by later
// updates. An SDK keeps the current Snapshot in an atomic.Pointer and swaps it on each
// change. The zero value and nil are empty snapshots.
type Snapshot struct {
	byKey map[string]*node
	keys  []string // every key, ordered
}

// node is a compiled flag as linked into one snapshot. The compiled flag is shared by every
// snapshot that holds that version of the flag; the prerequisite links belong to this
// snapshot alone, because the flags they point to differ between snapshots.
type node struct {
	*compiledFlag
	// links[i] is the flag that prereqs[i] names in this snapshot, nil when it does not exist.
	links []*node
}

// Compile compiles flags into a new Snapshot. When several flags share a key, the last one
// wins. The snapshot keeps its own deep copy: changing flags afterwards does not affect it.
func Compile(flags []Flag) *Snapshot {
	byKey := make(map[string]*compiledFlag, len(flags))
	for _, f := range flags {
		byKey[f.Key] = compile(f)
	}
	compiled := make([]*compiledFlag, 0, len(byKey))
	for _, c := range byKey {
		compiled = append(compiled, c)
	}
	return link(compiled)
}

// Upsert returns a new Snapshot holding f in place of any flag with the same key. Only f is
// compiled; the other flags are shared with s, and prerequisite links are re-resolved so that
// flags naming f.Key see the new version. Upsert does not compare versions: an SDK that
// ignores outdated updates checks Flag(key).Version first.
func (s *Snapshot) Upsert(f Flag) *Snapshot {
	c := compile(f)
	compiled := make([]*compiledFlag, 0, s.Len()+1)
	if s != nil {
		for key, n := range s.byKey {
			if key != c.key {
				compiled = append(compiled, n.compiledFlag)
			}
		}
	}
	return link(append(compiled, c))
}

// Delete returns a Snapshot without the flag key. Flags naming it as a prerequisite then
// find it missing, which makes that prerequisite unsatisfied. When key is absent, s itself is
// returned: snapshots never change, so sharing it is safe.
func (s *Snapshot) Delete(key string) *Snapshot {
	if s == nil || s.byKey[key] == nil {
		return s
	}
	compiled := make([]*compiledFlag, 0, len(s.byKey)-1)
	for k, n := range s.byKey {
		if k != key {
			compiled = append(compiled, n.compiledFlag)
		}
	}
	return link(compiled)
}

// link builds a snapshot from compiled flags with unique keys, resolving every prerequisite
// to a pointer. It relinks all flags, not only those naming a changed key, because a change
// is rare and an O(n) pass is what copying the map costs anyway.
func link(compiled []*compiledFlag) *Snapshot {
	nodes := make([]node, len(compiled))
	byKey := make(map[string]*node, len(compiled))
	total := 0
	for i, c := range compiled {
		nodes[i].compiledFlag = c
		byKey[c.key] = &nodes[i]
		total += len(c.prereqs)
	}
	// One backing array for all links keeps a snapshot at three allocations plus the map.
	all := make([]*node, total)
	for i := range nodes {
		n := &nodes[i]
		k := len(n.prereqs)
		n.links, all = all[:k:k], all[k:]
		for j, p := range n.prereqs {
			n.links[j] = byKey[p.flagKey]
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &Snapshot{byKey: byKey, keys: keys}
}

// Len returns the number of flags in the snapshot.
func (s *Snapshot) Len() int {
	if s == nil {
		return 0
	}
	return len(s.byKey)
}

// Keys returns the keys of every flag, ordered. The slice belongs to the snapshot: callers
// must not modify it.
func (s *Snapshot) Keys() []string {
	if s == nil {
		return nil
	}
	return s.keys
}

// FlagInfo is what a remote evaluation reports of a flag besides its result.
type FlagInfo struct {
	Type       FlagType
	Version    int64
	ClientSide bool
}

// Info returns the type, version and client-side availability of the flag key, and whether
// it exists, without copying the flag.
func (s *Snapshot) Info(key string) (FlagInfo, bool) {
	if s == nil {
		return FlagInfo{}, false
	}
	n := s.byKey[key]
	if n == nil {
		return FlagInfo{}, false
	}
	return FlagInfo{Type: n.src.FlagType, Version: n.src.Version, ClientSide: n.src.ClientSide}, true
}

// Flag returns a copy of the wire form of the flag key, and whether it exists.
func (s *Snapshot) Flag(key string) (Flag, bool) {
	if s == nil {
		return Flag{}, false
	}
	n := s.byKey[key]
	if n == nil {
		return Flag{}, false
	}
	return n.src.clone(), true
}

// Flags returns copies of the wire forms of all flags, ordered by key.
func (s *Snapshot) Flags() []Flag {
	if s == nil {
		return []Flag{}
	}
	flags := make([]Flag, 0, len(s.byKey))
	for _, n := range s.byKey {
		flags = append(flags, n.src.clone())
	}
	slices.SortFunc(flags, func(a, b Flag) int { return strings.Compare(a.Key, b.Key) })
	return flags
}
