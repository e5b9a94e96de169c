package follow

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/agree"
	"github.com/switchyard/switchyard/server/bus"
)

// memLog is a change log in memory.
type memLog struct {
	mu  sync.Mutex
	log []Change
}

func (l *memLog) append(e bus.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, Change{Seq: int64(len(l.log) + 1), Event: e})
}

func (l *memLog) Position(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strconv.Itoa(len(l.log)), nil
}

func (l *memLog) ChangesSince(_ context.Context, pos string) ([]Change, string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := strconv.Atoi(pos)
	if err != nil {
		return nil, pos, err
	}
	out := append([]Change(nil), l.log[min(n, len(l.log)):]...)
	return out, strconv.Itoa(len(l.log)), nil
}

func (l *memLog) PruneChangeLog(context.Context) (int64, error) { return 0, nil }

// gatedCache records what it is given and, while its gate is closed,
// holds every change it is given.
type gatedCache struct {
	mu   sync.Mutex
	seen []bus.Event
	gate chan struct{}
}

func (c *gatedCache) Apply(_ context.Context, e bus.Event) error {
	<-c.gate
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, e)
	return nil
}

func (c *gatedCache) events() []bus.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]bus.Event(nil), c.seen...)
}

func start(t *testing.T, log Log, cfg Config, caches ...Cache) *Follower {
	t.Helper()
	f := New(log, nil, cfg)
	if err := f.Start(context.Background(), caches...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// CaughtUp returns only once every change handed over before it has been
// applied, and at once when nothing is pending.
func TestCaughtUpWaitsForHandedChanges(t *testing.T) {
	c := &gatedCache{gate: make(chan struct{})}
	f := start(t, &memLog{}, Config{PollInterval: time.Hour}, c)
	if err := f.CaughtUp(context.Background()); err != nil {
		t.Fatalf("nothing pending: %v", err)
	}
	e := bus.Event{Op: bus.OpUpsert, EnvID: uuid.New(), Key: "k", Version: 1}
	if err := f.Publish(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := f.CaughtUp(ctx); err == nil {
		t.Fatal("CaughtUp returned before the cache applied the change")
	}
	done := make(chan error, 1)
	go func() { done <- f.CaughtUp(context.Background()) }()
	close(c.gate)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CaughtUp did not return after the change was applied")
	}
	if got := c.events(); len(got) != 1 || got[0] != e {
		t.Errorf("the cache saw %v, want %v", got, e)
	}
}

// Hand-overs the queue cannot take cause a resync, which releases the
// readers waiting for them: the caches rebuild from the database instead.
func TestOverflowResyncsAndReleasesReaders(t *testing.T) {
	c := &gatedCache{gate: make(chan struct{})}
	f := start(t, &memLog{}, Config{PollInterval: time.Hour, QueueSize: 2}, c)
	env := uuid.New()
	for v := range int64(5) {
		_ = f.Publish(context.Background(), bus.Event{Op: bus.OpUpsert, EnvID: env, Key: "k", Version: v + 1})
	}
	close(c.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.CaughtUp(ctx); err != nil {
		t.Fatalf("readers stay blocked after an overflow: %v", err)
	}
	resynced := false
	for _, e := range c.events() {
		resynced = resynced || e.Op == bus.OpResync
	}
	if !resynced {
		t.Errorf("an overflow did not resync the caches: %v", c.events())
	}
}

// A cache that cannot apply a change makes every cache resync.
func TestFailedApplyResyncsEveryCache(t *testing.T) {
	other := &gatedCache{gate: make(chan struct{})}
	close(other.gate)
	failing := CacheFunc(func(_ context.Context, e bus.Event) error {
		if e.Op == bus.OpUpsert {
			return context.DeadlineExceeded
		}
		return nil
	})
	f := start(t, &memLog{}, Config{PollInterval: time.Hour}, failing, other)
	f.Notify(bus.Event{Op: bus.OpUpsert, EnvID: uuid.New(), Key: "k", Version: 1})
	deadline := time.Now().Add(5 * time.Second)
	for {
		evs := other.events()
		if len(evs) == 2 && evs[1].Op == bus.OpResync {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other cache saw %v, want the upsert then a resync", evs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The change log delivers what the bus lost.
func TestChangeLogPollDeliversMissedChanges(t *testing.T) {
	log := &memLog{}
	c := &gatedCache{gate: make(chan struct{})}
	close(c.gate)
	start(t, log, Config{PollInterval: 10 * time.Millisecond}, c)
	e := bus.Event{Op: bus.OpUpsert, EnvID: uuid.New(), Key: "lost-on-the-bus", Version: 1}
	log.append(e) // never Notify-ed
	deadline := time.Now().Add(5 * time.Second)
	for len(c.events()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the polled change never arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := c.events()[0]; got != e {
		t.Errorf("polled %v, want %v", got, e)
	}
}

// BenchmarkCaughtUp is what every cached read pays to know it may answer:
// alone (one instance), and among several with both leases holding.
func BenchmarkCaughtUp(b *testing.B) {
	for _, tc := range []struct {
		name  string
		group bool
	}{{"one instance", false}, {"several, leases holding", true}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := Config{PollInterval: time.Hour}
			m := bus.NewMemory()
			var g *agree.Group
			if tc.group {
				g = agree.New(agree.Config{Bus: m, Lease: time.Hour, PollLease: time.Hour})
				cfg.Group = g
			}
			f := New(&memLog{}, m, cfg)
			if err := f.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			defer m.Subscribe(f.Notify)()
			if g != nil {
				g.Start()
				defer g.Close()
				for !g.Fresh() { // the first heartbeat comes back
					time.Sleep(time.Millisecond)
				}
			}
			ctx := context.Background()
			for b.Loop() {
				if err := f.CaughtUp(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
