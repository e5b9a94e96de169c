package core_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/core"
)

// recorder is a bus.Publisher that keeps what was published.
type recorder struct {
	mu     sync.Mutex
	events []bus.Event
}

func (r *recorder) Publish(_ context.Context, events ...bus.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, events...)
	return nil
}

func (r *recorder) take() []bus.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// Each committed write publishes exactly one notification per changed flag,
// after commit; failed writes publish nothing.
func TestWritesPublishAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{}
	svc, _, env := seeded(t, core.Config{Bus: rec})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}

	mustPut := func(body string) {
		t.Helper()
		if _, err := svc.PutFlag(ctx, admin, env, json.RawMessage(body)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateSegment(ctx, admin, env, core.SegmentInput{Key: "beta", Name: strp("Beta")}); err != nil {
		t.Fatal(err)
	}
	mustPut(`{"key":"a","is_enabled":true,"rules":[{"segment_key":"beta"}]}`)
	mustPut(`{"key":"b","is_enabled":true}`)
	if _, err := svc.PatchFlag(ctx, admin, env, "b", json.RawMessage(`{"is_enabled":false}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PatchFlag(ctx, admin, env, "b", json.RawMessage(`{"rollout_percentage":500}`)); err == nil {
		t.Fatal("an invalid patch succeeded")
	}
	if _, err := svc.PatchSegment(ctx, admin, env, "beta", core.SegmentInput{Name: strp("Beta 2")}); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteFlag(ctx, admin, env, "b"); err != nil {
		t.Fatal(err)
	}
	want := []bus.Event{
		{Op: bus.OpUpsert, EnvID: env, Key: "a", Version: 1},
		{Op: bus.OpUpsert, EnvID: env, Key: "b", Version: 1},
		{Op: bus.OpUpsert, EnvID: env, Key: "b", Version: 2},
		{Op: bus.OpUpsert, EnvID: env, Key: "a", Version: 2}, // the segment edit re-versions a
		{Op: bus.OpDelete, EnvID: env, Key: "b"},
	}
	if d := cmp.Diff(want, rec.take()); d != "" {
		t.Errorf("published events (-want +got):\n%s", d)
	}

	// The SDK form expands the segment.
	flags, err := svc.SDKFlags(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) != 1 || flags[0].Key != "a" || len(flags[0].Rules) != 0 {
		t.Errorf("SDK flags = %+v, want a with the empty segment expanded away", flags)
	}
}

func strp(s string) *string { return &s }
