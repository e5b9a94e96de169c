package stream

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/follow"
)

// gate holds the first call that reaches it until released; later calls
// pass.
type gate struct {
	entered chan struct{}
	release chan struct{}
	used    atomic.Bool
	opened  sync.Once
}

func newGate() *gate { return &gate{entered: make(chan struct{}), release: make(chan struct{})} }

func (g *gate) open() { g.opened.Do(func() { close(g.release) }) }

func (g *gate) pass(ctx context.Context) {
	if g.used.Swap(true) {
		return
	}
	close(g.entered)
	select {
	case <-g.release:
	case <-ctx.Done():
	}
}

// gatedSource is a fakeSource whose reads of chosen environments block,
// once, until the test releases them: a slow PostgreSQL.
type gatedSource struct {
	*fakeSource
	flagGates map[uuid.UUID]*gate // SDKFlag: the re-read of a change
	loadGates map[uuid.UUID]*gate // SDKFlags: the first read of an environment
	loads     sync.Map            // env -> *atomic.Int32, SDKFlags calls
}

func newGatedSource() *gatedSource {
	return &gatedSource{fakeSource: newFakeSource(), flagGates: map[uuid.UUID]*gate{}, loadGates: map[uuid.UUID]*gate{}}
}

func (g *gatedSource) SDKFlag(ctx context.Context, env uuid.UUID, key string) (eval.Flag, bool, error) {
	if gt := g.flagGates[env]; gt != nil {
		gt.pass(ctx)
	}
	return g.fakeSource.SDKFlag(ctx, env, key)
}

// SDKFlags reads the committed state first and then blocks, so what it
// returns predates whatever commits while it is held.
func (g *gatedSource) SDKFlags(ctx context.Context, env uuid.UUID) ([]eval.Flag, error) {
	n, _ := g.loads.LoadOrStore(env, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
	flags, err := g.fakeSource.SDKFlags(ctx, env)
	if gt := g.loadGates[env]; gt != nil {
		gt.pass(ctx)
	}
	return flags, err
}

func (g *gatedSource) loadCount(env uuid.UUID) int32 {
	n, ok := g.loads.Load(env)
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// within runs f and fails the test if it has not returned in 2 s: the hub
// must answer without waiting for a read that the test holds.
func within(t *testing.T, what string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("%s waited for a database read held by another operation", what)
	}
}

// While a change is being re-read from the database (here: held), new
// connections and snapshots of the same environment and of another one are
// served from the cache at once: a fan-out never makes new clients wait
// (docs/reference/code-style.md, §16 Contexts and locks). A connection that
// joined during the read gets the change on its queue.
func TestSlowChangeReadDoesNotBlockSubscribeOrSnapshot(t *testing.T) {
	src := newGatedSource()
	envA, envB := uuid.New(), uuid.New()
	src.commit(envA, "k", 1)
	src.commit(envB, "k", 1)
	read := newGate()
	src.flagGates[envA] = read
	h := startHub(t, src, Config{}, 0)
	t.Cleanup(read.open) // before the hub's cleanup, if the test fails
	ctx := context.Background()
	for _, env := range []uuid.UUID{envA, envB} {
		if _, err := h.Snapshot(ctx, env); err != nil { // loads both
			t.Fatal(err)
		}
	}
	h.Notify(src.commit(envA, "k", 2))
	waitFor(t, read.entered, "the hub to re-read the changed flag")

	var joined *Subscriber
	within(t, "Subscribe on the changing environment", func() error {
		s, boot, _, err := h.Subscribe(ctx, []uuid.UUID{envA}, nil)
		if err == nil && versionOf(t, boot) != 1 {
			t.Errorf("bootstrap during the read has version %d, want 1", versionOf(t, boot))
		}
		joined = s
		return err
	})
	within(t, "Snapshot of the changing environment", func() error {
		_, err := h.Snapshot(ctx, envA)
		return err
	})
	within(t, "Subscribe on another environment", func() error {
		_, _, _, err := h.Subscribe(ctx, []uuid.UUID{envB}, nil)
		return err
	})
	within(t, "Snapshot of another environment", func() error {
		_, err := h.Snapshot(ctx, envB)
		return err
	})
	within(t, "Snapshot of an environment not loaded yet", func() error {
		_, err := h.Snapshot(ctx, uuid.New())
		return err
	})
	read.open()
	if v := versionOf(t, recv(t, joined)); v != 2 {
		t.Errorf("the connection that joined during the read got version %d, want 2", v)
	}
}

// The first read of an environment is shared by the connections that ask
// for it at once (one query, not one per connection) and does not hold up
// other environments.
func TestFirstLoadIsSharedAndBlocksNoOtherEnvironment(t *testing.T) {
	src := newGatedSource()
	envA, envB := uuid.New(), uuid.New()
	src.commit(envA, "k", 1)
	src.commit(envB, "k", 1)
	load := newGate()
	src.loadGates[envA] = load
	h := startHub(t, src, Config{}, 0)
	t.Cleanup(load.open) // before the hub's cleanup, if the test fails
	ctx := context.Background()

	const joiners = 8
	var wg sync.WaitGroup
	subs := make(chan *Subscriber, joiners)
	for range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, boot, n, err := h.Subscribe(ctx, []uuid.UUID{envA}, nil)
			if err != nil || n != 1 || versionOf(t, boot) != 1 {
				t.Errorf("Subscribe: %v, %d flags %q", err, n, boot)
				return
			}
			subs <- s
		}()
	}
	waitFor(t, load.entered, "the first read of the environment")
	within(t, "Subscribe on another environment during a first read", func() error {
		_, _, _, err := h.Subscribe(ctx, []uuid.UUID{envB}, nil)
		return err
	})
	within(t, "Snapshot of another environment during a first read", func() error {
		_, err := h.Snapshot(ctx, envB)
		return err
	})
	load.open()
	wg.Wait()
	close(subs)
	if n := src.loadCount(envA); n != 1 {
		t.Errorf("%d concurrent first subscribers read the environment %d times, want once", joiners, n)
	}
	h.Notify(src.commit(envA, "k", 2))
	for s := range subs {
		if v := versionOf(t, recv(t, s)); v != 2 {
			t.Errorf("live update version %d, want 2", v)
		}
	}
}

// A change committed while an environment's first read is in flight (the
// read predates it) still reaches the connections that were waiting for
// that read.
func TestChangeDuringFirstLoadIsNotLost(t *testing.T) {
	src := newGatedSource()
	env := uuid.New()
	src.commit(env, "k", 1)
	load := newGate()
	src.loadGates[env] = load
	h := startHub(t, src, Config{}, 0)
	t.Cleanup(load.open) // before the hub's cleanup, if the test fails
	type joined struct {
		s    *Subscriber
		boot []byte
	}
	res := make(chan joined, 1)
	go func() {
		s, boot, _, err := h.Subscribe(context.Background(), []uuid.UUID{env}, nil)
		if err != nil {
			t.Error(err)
		}
		res <- joined{s, boot}
	}()
	waitFor(t, load.entered, "the first read")
	h.Notify(src.commit(env, "k", 2))
	load.open()
	j := <-res
	if j.s == nil {
		t.FailNow()
	}
	// The change is installed once the read ends; the joiner registers
	// either before that (bootstrap 1, then 2 on its queue) or after it
	// (bootstrap 2). Either way it ends at version 2, never missing it.
	switch v := versionOf(t, j.boot); v {
	case 1:
		if v := versionOf(t, recv(t, j.s)); v != 2 {
			t.Errorf("bootstrap 1, then version %d, want 2", v)
		}
	case 2:
	default:
		t.Fatalf("bootstrap version %d, want 1 or 2", v)
	}
}

// A resync while a connection waits for its environment's first read ends
// that read's state; the connection is registered in the fresh one and
// keeps receiving.
func TestResyncDuringFirstLoad(t *testing.T) {
	src := newGatedSource()
	env := uuid.New()
	src.commit(env, "k", 1)
	load := newGate()
	src.loadGates[env] = load
	seen := make(chan struct{})
	var marked sync.Once
	h := startHub(t, src, Config{}, 0, follow.CacheFunc(func(_ context.Context, e bus.Event) error {
		if e.Key == "marker" {
			marked.Do(func() { close(seen) })
		}
		return nil
	}))
	t.Cleanup(load.open) // before the hub's cleanup, if the test fails
	res := make(chan *Subscriber, 1)
	go func() {
		s, _, _, err := h.Subscribe(context.Background(), []uuid.UUID{env}, nil)
		if err != nil {
			t.Error(err)
		}
		res <- s
	}()
	waitFor(t, load.entered, "the first read")
	h.Notify(bus.Event{Op: bus.OpResync})
	// Notifications are handled one at a time: once the hub has seen the
	// next one, the resync has run.
	h.Notify(bus.Event{Op: bus.OpDelete, EnvID: uuid.New(), Key: "marker"})
	waitFor(t, seen, "the resync to run while the first read is held")
	load.open()
	s := <-res
	if s == nil {
		t.FailNow()
	}
	select {
	case <-s.Done():
		return // ended: also correct, the client reconnects
	default:
	}
	h.Notify(src.commit(env, "k", 2))
	if v := versionOf(t, recv(t, s)); v != 2 {
		t.Errorf("after the resync the connection got version %d, want 2", v)
	}
}

// A connection registered after a change is installed but before it is
// fanned out has the change in its bootstrap and does not get it a second
// time on its queue; the next change reaches it.
func TestJoinBetweenInstallAndFanout(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	src.commit(env, "k", 1)
	hub := New(src, Config{})
	type joined struct {
		s    *Subscriber
		boot []byte
	}
	var once sync.Once
	res := make(chan joined, 1)
	hub.beforeFanout = func() {
		once.Do(func() {
			s, boot, _, err := hub.Subscribe(context.Background(), []uuid.UUID{env}, nil)
			if err != nil {
				t.Error(err)
			}
			res <- joined{s, boot}
		})
	}
	h := startHubOf(t, hub, src, 0)
	witness, _, _, err := h.Subscribe(context.Background(), []uuid.UUID{env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Notify(src.commit(env, "k", 2))
	j := <-res
	if v := versionOf(t, j.boot); v != 2 {
		t.Fatalf("joined after the install: bootstrap version %d, want 2", v)
	}
	if v := versionOf(t, recv(t, witness)); v != 2 {
		t.Fatalf("witness got version %d, want 2", v)
	}
	h.Notify(src.commit(env, "k", 3))
	if v := versionOf(t, recv(t, witness)); v != 3 {
		t.Fatalf("witness got version %d, want 3", v)
	}
	if v := versionOf(t, recv(t, j.s)); v != 3 {
		t.Errorf("the joiner's first live update is version %d, want 3 (2 was in its bootstrap)", v)
	}
}

// Connections joining all through a series of changes each see, from their
// bootstrap on, every version exactly once and in order: nothing lost
// between bootstrap and queue, nothing twice.
func TestJoinersDuringChangesSeeEveryVersionOnce(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	src.commit(env, "k", 1)
	h := startHub(t, src, Config{QueueSize: 1 << 12}, 0)
	ctx := context.Background()
	witness, _, _, err := h.Subscribe(ctx, []uuid.UUID{env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const last = 200
	const joiners = 64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Spread the joins over the series.
			for range i * 3 {
				time.Sleep(50 * time.Microsecond)
			}
			s, boot, _, err := h.Subscribe(ctx, []uuid.UUID{env}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Unsubscribe(s)
			v := versionOf(t, boot)
			for v < last {
				var frames [][]byte
				select {
				case <-s.Wake():
					frames = s.Take()
				case <-s.Done():
					t.Errorf("joiner at version %d: stream ended", v)
					return
				case <-time.After(10 * time.Second):
					t.Errorf("joiner stuck at version %d", v)
					return
				}
				for _, f := range frames {
					got := versionOf(t, f)
					if got != v+1 {
						t.Errorf("joiner after version %d got version %d", v, got)
						return
					}
					v = got
				}
			}
		}()
	}
	close(start)
	// One change at a time, each fanned out before the next is committed,
	// so every version is delivered on its own.
	for v := int64(2); v <= last; v++ {
		h.Notify(src.commit(env, "k", v))
		if got := versionOf(t, recv(t, witness)); got != v {
			t.Fatalf("witness got version %d, want %d", got, v)
		}
	}
	wg.Wait()
}

// A snapshot's gzip body is computed once and decompresses to the body.
func TestSnapshotGzipIsComputedOnce(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	for i := range 50 {
		src.commit(env, strings.Repeat("k", i+1), 1)
	}
	h := startHub(t, src, Config{}, 0)
	a, err := h.Snapshot(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	z1, z2 := a.Gzip(), a.Gzip()
	if &z1[0] != &z2[0] {
		t.Error("the gzip body was compressed twice")
	}
	if len(z1) >= len(a.Body) {
		t.Errorf("gzip body %d bytes, identity %d", len(z1), len(a.Body))
	}
	zr, err := gzip.NewReader(bytes.NewReader(z1))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, a.Body) {
		t.Errorf("gzip body decompresses to %d bytes (%v), want the %d-byte body", len(plain), err, len(a.Body))
	}
}
