// Package bustest is the conformance suite every bus.Bus implementation
// passes: the in-process one and Redis run the same tests.
package bustest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/bus"
)

// Factory returns two handles on one medium, as two instances would hold.
type Factory func(t *testing.T) (a, b bus.Bus)

// collector gathers the non-resync events a subscriber receives.
type collector struct {
	mu     sync.Mutex
	events []bus.Event
}

func (c *collector) add(e bus.Event) {
	if e.Op == bus.OpResync {
		return // resyncs are allowed at any time; they only cost a reconnect
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

func (c *collector) wait(t *testing.T, n int) []bus.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		got := append([]bus.Event(nil), c.events...)
		c.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Run runs the suite.
func Run(t *testing.T, newBus Factory) {
	t.Run("every instance receives, the publisher included, in order", func(t *testing.T) {
		a, b := newBus(t)
		var onA, onB collector
		defer a.Subscribe(onA.add)()
		defer b.Subscribe(onB.add)()
		env := uuid.New()
		want := []bus.Event{
			{Op: bus.OpUpsert, EnvID: env, Key: "a", Version: 1},
			{Op: bus.OpUpsert, EnvID: env, Key: "a", Version: 2},
			{Op: bus.OpDelete, EnvID: env, Key: "a"},
		}
		if err := a.Publish(context.Background(), want...); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]*collector{"publisher": &onA, "other": &onB} {
			got := c.wait(t, len(want))
			if len(got) != len(want) {
				t.Fatalf("%s received %v, want %v", name, got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s event %d = %+v, want %+v", name, i, got[i], want[i])
				}
			}
		}
	})
	t.Run("cancel stops delivery", func(t *testing.T) {
		a, b := newBus(t)
		var kept, dropped collector
		defer b.Subscribe(kept.add)()
		cancel := b.Subscribe(dropped.add)
		cancel()
		e := bus.Event{Op: bus.OpUpsert, EnvID: uuid.New(), Key: "k", Version: 1}
		if err := a.Publish(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		if got := kept.wait(t, 1); len(got) != 1 {
			t.Fatalf("kept subscriber received %v", got)
		}
		if got := dropped.wait(t, 0); len(got) != 0 {
			t.Errorf("cancelled subscriber received %v", got)
		}
	})
}
