package eval_test

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// TestSnapshotIsolation checks that a snapshot shares no memory with its callers and that
// Upsert and Delete never change an existing snapshot (copy-on-write).
func TestSnapshotIsolation(t *testing.T) {
	in := []eval.Flag{{
		Key: "f", IsEnabled: true, FlagType: eval.FlagTypeString, DefaultValue: raw(`"on"`),
		Rules: []eval.Rule{{Attribute: "plan", Operator: eval.OpEquals, Values: []string{"pro"}, Variant: raw(`"pro"`)}},
		Tags:  []string{"a"},
	}}
	snap := eval.Compile(in)

	// Changing what was passed in changes nothing.
	in[0].Rules[0].Values[0] = "free"
	in[0].DefaultValue[1] = 'X'
	in[0].Tags[0] = "changed"
	if got := snap.Evaluate("f", "u", map[string]any{"plan": "pro"}).Value; got != "pro" {
		t.Errorf("after changing the input, rule result %v, want pro", got)
	}
	stored, _ := snap.Flag("f")
	if stored.Tags[0] != "a" || string(stored.DefaultValue) != `"on"` {
		t.Errorf("stored flag changed with its input: %+v", stored)
	}

	// Changing what was handed out changes nothing either.
	stored.Rules[0].Values[0] = "free"
	stored.Tags[0] = "changed"
	again, _ := snap.Flag("f")
	if diff := cmp.Diff([]string{"pro"}, again.Rules[0].Values); diff != "" {
		t.Errorf("Flag() result shares memory with the snapshot (-want +got):\n%s", diff)
	}

	// Upsert and Delete return new snapshots and leave the old one alone.
	upd := eval.Flag{Key: "f", IsEnabled: false, FlagType: eval.FlagTypeString, DisabledValue: raw(`"off"`), Version: 2}
	next := snap.Upsert(upd).Upsert(eval.Flag{Key: "g", IsEnabled: true})
	gone := next.Delete("f")
	tests := []struct {
		name string
		snap *eval.Snapshot
		keys []string
		f    any
	}{
		{"original", snap, []string{"f"}, "on"},
		{"after upsert", next, []string{"f", "g"}, "off"},
		{"after delete", gone, []string{"g"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keys []string
			for _, f := range tt.snap.Flags() {
				keys = append(keys, f.Key)
			}
			if diff := cmp.Diff(tt.keys, keys); diff != "" {
				t.Errorf("Flags() keys mismatch (-want +got):\n%s", diff)
			}
			if tt.snap.Len() != len(tt.keys) {
				t.Errorf("Len() = %d, want %d", tt.snap.Len(), len(tt.keys))
			}
			if got := tt.snap.Evaluate("f", "u", nil).Value; got != tt.f {
				t.Errorf("Evaluate(f) = %v, want %v", got, tt.f)
			}
		})
	}
	if gone.Delete("absent") != gone {
		t.Error("Delete of an absent key should return the same snapshot")
	}
}

// TestUpsertRelinksPrerequisites checks that prerequisites always point at the flag of the
// snapshot they are evaluated in, after every kind of change.
func TestUpsertRelinksPrerequisites(t *testing.T) {
	child := eval.Flag{Key: "child", IsEnabled: true, Prerequisites: []eval.Prerequisite{{FlagKey: "parent"}}}
	parentOn := eval.Flag{Key: "parent", IsEnabled: true}
	parentOff := eval.Flag{Key: "parent", IsEnabled: false}

	s0 := eval.Compile([]eval.Flag{child})                      // parent missing
	s1 := s0.Upsert(parentOn)                                   // parent arrives
	s2 := s1.Upsert(parentOff)                                  // parent switched off
	s3 := s2.Delete("parent")                                   // parent deleted
	s4 := s3.Upsert(parentOn).Upsert(child)                     // child re-sent after parent
	s5 := eval.Compile([]eval.Flag{parentOff, child, parentOn}) // duplicate keys: last wins

	tests := []struct {
		name string
		snap *eval.Snapshot
		want bool
	}{
		{"parent missing", s0, false},
		{"parent arrives later", s1, true},
		{"parent switched off", s2, false},
		{"parent deleted", s3, false},
		{"parent back", s4, true},
		{"last duplicate wins", s5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.snap.Evaluate("child", "u", nil).Value; got != tt.want {
				t.Errorf("Evaluate(child) = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFlagsSortedCopies checks Flags() order and Flag() versions.
func TestFlagsSortedCopies(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := eval.Compile([]eval.Flag{{Key: "b", Version: 2}, {Key: "a", Version: 1, CreatedAt: ts}, {Key: "c", Version: 3}})
	var keys []string
	for _, f := range snap.Flags() {
		keys = append(keys, f.Key)
	}
	if !slices.Equal(keys, []string{"a", "b", "c"}) {
		t.Errorf("Flags() keys %v, want sorted a b c", keys)
	}
	f, ok := snap.Flag("a")
	if !ok || f.Version != 1 || !f.CreatedAt.Equal(ts) {
		t.Errorf("Flag(a) = %+v, %v", f, ok)
	}
}

// TestConcurrentReadersDuringUpdates runs readers against snapshots that a writer keeps
// replacing through an atomic.Pointer, as the SDK does; with -race it proves that evaluation
// needs no locks, and each reader checks that the snapshot it holds never changes.
func TestConcurrentReadersDuringUpdates(t *testing.T) {
	flagAt := func(v int) eval.Flag {
		return eval.Flag{
			Key: "f", IsEnabled: true, FlagType: eval.FlagTypeInteger, Version: int64(v),
			DefaultValue: raw(strconv.Itoa(v)), Prerequisites: []eval.Prerequisite{{FlagKey: "p"}},
		}
	}
	var current atomic.Pointer[eval.Snapshot]
	current.Store(eval.Compile([]eval.Flag{{Key: "p", IsEnabled: true}, flagAt(0)}))

	const updates = 500
	var wg sync.WaitGroup
	done := make(chan struct{})
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				snap := current.Load()
				first := snap.Evaluate("f", "user-"+strconv.Itoa(r), nil)
				second := snap.Evaluate("f", "user-"+strconv.Itoa(i), nil)
				if first.Value != second.Value || first.Reason != eval.ReasonDefault {
					t.Errorf("one snapshot gave %+v then %+v", first, second)
					return
				}
			}
		}()
	}
	for v := 1; v <= updates; v++ {
		snap := current.Load()
		if v%50 == 0 {
			snap = snap.Delete("p").Upsert(eval.Flag{Key: "p", IsEnabled: true})
		}
		current.Store(snap.Upsert(flagAt(v)))
	}
	close(done)
	wg.Wait()
	if got := current.Load().Evaluate("f", "u", nil).Value; got != float64(updates) {
		t.Errorf("final value %v, want %d", got, updates)
	}
}
