// Package agree makes every instance of a deployment agree on what has been
// acknowledged: a write answers only once every live instance has applied
// it, and an instance that cannot be sure it has every acknowledged change
// does not answer from its caches (docs/architecture.md, Every instance
// agrees).
//
// Two leases bound what an instance may serve from memory. The bus lease:
// every instance publishes a heartbeat (OpPing) every quarter of Lease and
// hears it back in the bus's order; once its follower has applied
// everything delivered before the heartbeat, the instance may answer from
// its caches until Lease after it sent it. The poll lease: after applying a
// complete read of the change log, until PollLease after the read began.
// An instance whose leases have lapsed first catches up from the change log
// (the follower's CaughtUp).
//
// A writer publishes its change tagged with its instance id and a number
// (Tag), and waits (Wait) until every instance it has heard from confirms
// with OpAck that it has applied the change, or until no instance can still
// be serving without it: Lease after the publish returned (any instance
// that heard a later heartbeat of its own has the change before it), or
// PollLease after the commit when the publish failed (any instance that
// read the change log later has it). Both bounds rely on clocks that tick
// at about the same rate, not on clocks that agree: each instance measures
// only its own intervals.
package agree

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/server/bus"
)

// Default leases.
const (
	DefaultLease     = time.Second
	DefaultPollLease = 2 * time.Second
)

// forgetAfter is how long an instance that no longer answers is remembered;
// one that left through a crash costs each write nothing once suspected.
const forgetAfter = 10 * time.Minute

// Config configures a Group; its zero value needs only Bus.
type Config struct {
	Self      string        // this instance's id; random when empty
	Bus       bus.Publisher // the bus every instance hears
	Lease     time.Duration // the bus lease; DefaultLease when 0
	PollLease time.Duration // the change-log lease; DefaultPollLease when 0
	Logger    *slog.Logger
	// OnWaitCut, when set, is told of every write that stopped waiting for
	// a confirmation at its bound, for metrics.
	OnWaitCut func()
}

// Group is this instance's view of the deployment's instances.
type Group struct {
	cfg   Config
	start time.Time // the origin of every instant below (monotonic)
	next  atomic.Uint64

	// Until when this instance may answer from its caches, in nanoseconds
	// since start: the bus lease and the poll lease.
	busUntil  atomic.Int64
	pollUntil atomic.Int64

	mu      sync.Mutex
	epoch   uint64 // raised whenever delivery may have lost a message
	recv    uint64 // messages seen, in delivery order
	members map[string]*member
	waits   map[uint64]*wait
	pings   map[uint64]ping

	acks chan bus.Event
	stop context.CancelFunc
	done chan struct{}
}

// member is another instance, as this one has heard it.
type member struct {
	heard   uint64        // recv of its latest heartbeat
	suspect uint64        // recv of the echo of a write it did not confirm in time
	heardAt time.Duration // when its latest heartbeat arrived
}

// waiting reports whether writes wait for m: it has sent a heartbeat since
// it last failed to confirm one. A heartbeat it confirmed after that write
// reached this instance before any later write's echo, so a write never
// leaves out an instance that may be serving without it.
func (m *member) waiting() bool { return m.heard > m.suspect }

// wait is one write waiting for confirmations.
type wait struct {
	echoed  bool
	echo    uint64          // recv of the write's own message coming back
	pending map[string]bool // instances yet to confirm
	acked   map[string]bool // confirmations that came before the echo
	done    chan struct{}
}

// ping is a heartbeat on its way round.
type ping struct {
	sent  time.Duration
	epoch uint64
}

// New returns a Group; Start it.
func New(cfg Config) *Group {
	if cfg.Self == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.Self = hex.EncodeToString(b[:])
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.PollLease <= 0 {
		cfg.PollLease = DefaultPollLease
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Group{
		cfg: cfg, start: time.Now(),
		members: map[string]*member{}, waits: map[uint64]*wait{}, pings: map[uint64]ping{},
		acks: make(chan bus.Event, 4096), done: make(chan struct{}),
	}
}

func (g *Group) now() time.Duration { return time.Since(g.start) }

// Start sends heartbeats and confirmations until Close.
func (g *Group) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	g.stop = cancel
	go g.run(ctx)
}

// Close fences this instance (it answers from its caches no more) and tells
// the others it has left, so that no write waits for it.
func (g *Group) Close() {
	g.Lost()
	if g.stop == nil {
		return
	}
	g.stop()
	<-g.done
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = g.cfg.Bus.Publish(ctx, bus.Event{Op: bus.OpLeave, From: g.cfg.Self})
}

func (g *Group) run(ctx context.Context) {
	defer close(g.done)
	tick := time.NewTicker(g.cfg.Lease / 4)
	defer tick.Stop()
	pinged := make(chan struct{}, 1)
	go func() {
		defer func() { pinged <- struct{}{} }()
		g.ping(ctx) // at once: a starting instance has no lease before it
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-g.acks:
			batch := []bus.Event{e}
			for len(batch) < 256 {
				select {
				case e := <-g.acks:
					batch = append(batch, e)
					continue
				default:
				}
				break
			}
			g.publish(ctx, batch...)
		case <-tick.C:
			g.forget()
			// A heartbeat whose publish hangs (Redis unreachable) must not
			// hold up confirmations: one at a time, in the background.
			select {
			case <-pinged:
				go func() {
					defer func() { pinged <- struct{}{} }()
					g.ping(ctx)
				}()
			default:
			}
		}
	}
}

func (g *Group) publish(ctx context.Context, events ...bus.Event) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Lease)
	defer cancel()
	if err := g.cfg.Bus.Publish(ctx, events...); err != nil {
		g.cfg.Logger.Debug("publish to the other instances", "err", err.Error())
	}
}

// ping publishes one heartbeat, noting when it left.
func (g *Group) ping(ctx context.Context) {
	id := g.next.Add(1)
	g.mu.Lock()
	g.pings[id] = ping{sent: g.now(), epoch: g.epoch}
	g.mu.Unlock()
	g.publish(ctx, bus.Event{Op: bus.OpPing, From: g.cfg.Self, ID: id})
}

// forget drops heartbeats that never came back and instances long silent.
func (g *Group) forget() {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, p := range g.pings {
		if now-p.sent > g.cfg.Lease {
			delete(g.pings, id)
		}
	}
	for id, m := range g.members {
		if now-m.heardAt > forgetAfter {
			delete(g.members, id)
		}
	}
}

// Observe takes every message the bus delivers, in delivery order, and
// reports whether the follower should queue it: changes, and this
// instance's own heartbeats (Confirmed), which must come out of the queue
// after every change delivered before them.
func (g *Group) Observe(e bus.Event) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.recv++
	switch e.Op {
	case bus.OpPing:
		if e.From == g.cfg.Self {
			return true
		}
		m := g.members[e.From]
		if m == nil {
			m = &member{}
			g.members[e.From] = m
		}
		m.heard, m.heardAt = g.recv, g.now()
		return false
	case bus.OpAck:
		if e.To == g.cfg.Self {
			if w := g.waits[e.ID]; w != nil {
				w.acked[e.From] = true
				delete(w.pending, e.From)
				g.settle(w)
			}
		}
		return false
	case bus.OpLeave:
		delete(g.members, e.From)
		for _, w := range g.waits {
			delete(w.pending, e.From)
			g.settle(w)
		}
		return false
	case bus.OpResync:
		g.lostLocked()
		return true
	}
	if e.From == g.cfg.Self && e.ID != 0 {
		if w := g.waits[e.ID]; w != nil && !w.echoed {
			// Every instance this one has heard before its own message came
			// back must confirm it: their heartbeats came before it.
			w.echoed, w.echo = true, g.recv
			for id, m := range g.members {
				if m.waiting() && !w.acked[id] {
					w.pending[id] = true
				}
			}
			g.settle(w)
		}
	}
	return true
}

// settle releases w's writer once nothing is pending.
func (g *Group) settle(w *wait) {
	if w.echoed && len(w.pending) == 0 {
		select {
		case <-w.done:
		default:
			close(w.done)
		}
	}
}

// Confirmed is called by the follower when this instance's heartbeat id
// comes out of its queue: every change delivered before it is applied.
func (g *Group) Confirmed(id uint64) {
	g.mu.Lock()
	p, ok := g.pings[id]
	delete(g.pings, id)
	epoch := g.epoch
	g.mu.Unlock()
	if ok && p.epoch == epoch {
		raise(&g.busUntil, int64(p.sent+g.cfg.Lease))
	}
}

// Polled is called by the follower after it has applied a complete read of
// the change log that began at began (Now).
func (g *Group) Polled(began time.Duration) {
	raise(&g.pollUntil, int64(began+g.cfg.PollLease))
}

// Lost ends the bus lease at once: delivery may have lost a message (a
// resubscription, a full queue), so only heartbeats sent from now on count.
func (g *Group) Lost() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lostLocked()
}

func (g *Group) lostLocked() {
	g.epoch++
	g.busUntil.Store(0)
}

// Now is the group's clock, for Polled.
func (g *Group) Now() time.Duration { return g.now() }

// Fresh reports whether this instance may answer from its caches now.
func (g *Group) Fresh() bool {
	now := int64(g.now())
	return now < g.busUntil.Load() && now < g.pollUntil.Load()
}

// Applied is called by the follower once it has applied e: a change another
// instance published is confirmed to it.
func (g *Group) Applied(e bus.Event) {
	if e.From == "" || e.From == g.cfg.Self || e.ID == 0 {
		return
	}
	select {
	case g.acks <- bus.Event{Op: bus.OpAck, From: g.cfg.Self, To: e.From, ID: e.ID}:
	default: // the writer stops waiting at its bound
	}
}

// Write is one write's wait for confirmations (Tag).
type Write struct {
	id        uint64
	committed time.Duration
}

// Tag marks events as this instance's, numbered, and starts waiting for
// their confirmations; call it after commit and before publishing, then
// Wait. Only the last event is waited for: every instance applies one
// publish's events in order.
func (g *Group) Tag(events []bus.Event) Write {
	w := Write{committed: g.now()}
	for i := range events {
		events[i].From, events[i].ID = g.cfg.Self, g.next.Add(1)
		w.id = events[i].ID
	}
	g.mu.Lock()
	g.waits[w.id] = &wait{pending: map[string]bool{}, acked: map[string]bool{}, done: make(chan struct{})}
	g.mu.Unlock()
	return w
}

// PublishDeadline bounds the publish of w: past it the write no longer
// needs the bus.
func (g *Group) PublishDeadline(w Write) time.Time {
	return g.start.Add(w.committed + g.cfg.PollLease)
}

// Wait returns once every instance has confirmed w, or once none can still
// be serving without it. published says whether the publish succeeded.
func (g *Group) Wait(w Write, published bool) {
	g.mu.Lock()
	wt := g.waits[w.id]
	g.mu.Unlock()
	deadline := w.committed + g.cfg.PollLease
	if published {
		deadline = min(deadline, g.now()+g.cfg.Lease)
	}
	t := time.NewTimer(deadline - g.now())
	defer t.Stop()
	select {
	case <-wt.done:
	case <-t.C:
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.waits, w.id)
	if len(wt.pending) > 0 && g.cfg.OnWaitCut != nil {
		g.cfg.OnWaitCut()
	}
	for id := range wt.pending {
		if m := g.members[id]; m != nil && wt.echoed {
			m.suspect = max(m.suspect, wt.echo)
		}
	}
}

// raise moves v up to n, never down.
func raise(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}
