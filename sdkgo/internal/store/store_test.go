package store

import (
	"testing"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

func flag(key string, version int64, on bool) eval.Flag {
	return eval.Flag{Key: key, IsEnabled: on, Version: version}
}

func on(s *Store, key string) bool {
	v, _ := s.Snapshot().Evaluate(key, "u", nil).Value.(bool)
	return v
}

func TestReplayReplacesAtReady(t *testing.T) {
	var s Store
	s.Replace([]eval.Flag{flag("old", 1, true)})
	s.Begin()
	s.Upsert(flag("new", 1, true))
	if !on(&s, "old") || on(&s, "new") {
		t.Fatal("the store changed before ready")
	}
	s.Ready()
	if on(&s, "old") || !on(&s, "new") {
		t.Fatal("ready did not install exactly the replay")
	}
}

func TestLiveUpdatesKeepTheHighestVersion(t *testing.T) {
	var s Store
	s.Replace([]eval.Flag{flag("k", 5, true)})
	s.Upsert(flag("k", 4, false))
	if !on(&s, "k") {
		t.Fatal("an older version replaced a newer one")
	}
	s.Upsert(flag("k", 6, false))
	if on(&s, "k") {
		t.Fatal("a newer version was ignored")
	}
	s.Delete("k")
	if r := s.Snapshot().Evaluate("k", "u", nil); r.Reason != eval.ReasonFlagNotFound {
		t.Fatalf("after delete: %v", r.Reason)
	}
}
