package agree_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/agree"
	"github.com/switchyard/switchyard/server/bus"
)

// sent records what a group publishes; the tests deliver by hand, in the
// order a bus would.
type sent struct {
	mu     sync.Mutex
	events []bus.Event
}

func (s *sent) Publish(_ context.Context, events ...bus.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, events...)
	return nil
}

const lease = 200 * time.Millisecond

func newGroup(t *testing.T) (*agree.Group, *sent) {
	t.Helper()
	out := &sent{}
	return agree.New(agree.Config{Self: "self", Bus: out, Lease: lease, PollLease: 2 * lease}), out
}

// write tags a change, delivers its echo, and waits in the background.
func write(g *agree.Group) (ev bus.Event, done chan time.Duration) {
	events := []bus.Event{{Op: bus.OpUpsert, Key: "f"}}
	w := g.Tag(events)
	g.Observe(events[0]) // the echo
	done = make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		g.Wait(w, true)
		done <- time.Since(start)
	}()
	return events[0], done
}

func TestWriteWaitsForEveryInstanceHeard(t *testing.T) {
	g, _ := newGroup(t)
	g.Observe(bus.Event{Op: bus.OpPing, From: "b", ID: 1})
	g.Observe(bus.Event{Op: bus.OpPing, From: "c", ID: 1})
	ev, done := write(g)
	g.Observe(bus.Event{Op: bus.OpAck, From: "b", To: "self", ID: ev.ID})
	select {
	case <-done:
		t.Fatal("the write answered before c confirmed it")
	case <-time.After(lease / 4):
	}
	g.Observe(bus.Event{Op: bus.OpAck, From: "c", To: "self", ID: ev.ID})
	if took := <-done; took >= lease {
		t.Errorf("the write waited %v with every confirmation in", took)
	}
}

// An instance that does not confirm holds a write up for the lease, then
// no write until it is heard again.
func TestSilentInstanceIsSuspectedUntilHeard(t *testing.T) {
	g, _ := newGroup(t)
	g.Observe(bus.Event{Op: bus.OpPing, From: "b", ID: 1})
	_, done := write(g)
	if took := <-done; took < lease {
		t.Fatalf("the write waited %v for an instance that never confirmed; want the lease %v", took, lease)
	}
	_, done = write(g)
	if took := <-done; took >= lease/2 {
		t.Errorf("a suspected instance held a write up for %v", took)
	}
	g.Observe(bus.Event{Op: bus.OpPing, From: "b", ID: 2})
	ev, done := write(g)
	select {
	case <-done:
		t.Fatal("an instance heard again was not waited for")
	case <-time.After(lease / 4):
	}
	g.Observe(bus.Event{Op: bus.OpAck, From: "b", To: "self", ID: ev.ID})
	<-done
}

func TestLeftInstanceIsNotWaitedFor(t *testing.T) {
	g, _ := newGroup(t)
	g.Observe(bus.Event{Op: bus.OpPing, From: "b", ID: 1})
	_, done := write(g)
	g.Observe(bus.Event{Op: bus.OpLeave, From: "b"})
	if took := <-done; took >= lease/2 {
		t.Errorf("the write waited %v for an instance that left", took)
	}
}

// The bus lease holds only after a heartbeat of this instance came back,
// and ends at once when delivery may have lost a message; a heartbeat sent
// before that does not renew it.
func TestFreshNeedsBothLeases(t *testing.T) {
	g, out := newGroup(t)
	g.Start()
	defer g.Close()
	ping := func() bus.Event {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			out.mu.Lock()
			for i, e := range out.events {
				if e.Op == bus.OpPing {
					out.events = append(out.events[:i], out.events[i+1:]...)
					out.mu.Unlock()
					return e
				}
			}
			out.mu.Unlock()
		}
		t.Fatal("no heartbeat")
		return bus.Event{}
	}
	if g.Fresh() {
		t.Fatal("fresh before any heartbeat came back")
	}
	p := ping()
	if !g.Observe(p) {
		t.Fatal("an own heartbeat must go through the follower's queue")
	}
	g.Confirmed(p.ID)
	if g.Fresh() {
		t.Fatal("fresh without a read of the change log")
	}
	g.Polled(g.Now())
	if !g.Fresh() {
		t.Fatal("not fresh with both leases")
	}
	old := ping()
	g.Lost()
	if g.Fresh() {
		t.Fatal("fresh after a loss")
	}
	g.Confirmed(old.ID)
	if g.Fresh() {
		t.Fatal("a heartbeat sent before the loss renewed the lease")
	}
	// One heartbeat may have left just before the loss; a later one renews.
	for i := 0; !g.Fresh(); i++ {
		if i == 3 {
			t.Fatal("heartbeats after the loss did not renew the lease")
		}
		g.Confirmed(ping().ID)
	}
	time.Sleep(2 * lease)
	if g.Fresh() {
		t.Fatal("still fresh after the leases ran out")
	}
}
