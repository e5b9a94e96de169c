// Package follow is the one consumer of committed changes on an instance.
// It takes change notifications from three places: the bus (every
// instance's writes, fast), the change log in PostgreSQL (a safety net
// polled every second, for what the bus lost) and this instance's own write
// path (handed over after commit, before the write is acknowledged). It
// applies them, one at a time and in order, to everything that caches
// committed state (the SDK-key cache, the stream hub and, through the hub,
// remote evaluation).
//
// Reads see their writes: a write hands its changes over before it answers,
// and CaughtUp waits until every change handed over before the call has
// been applied. A reader that calls it first therefore includes every write
// this instance has acknowledged, and pays two atomic loads when nothing is
// pending: no database read. With several instances (Config.Group) a write
// also waits until the others have applied it, and CaughtUp first reads the
// change log when this instance's leases have lapsed (server/agree): a
// reader then includes every write any instance has acknowledged.
//
// When changes may have been lost (a Redis reconnect, a full queue, a cache
// that could not re-read a change) the follower resyncs: it moves its
// change-log position to now and sends every cache bus.OpResync, after
// which each rebuilds from the database.
package follow

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/server/agree"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/bus"
)

// Cache keeps state derived from committed changes. Apply runs on the
// follower's goroutine, one change at a time: it may read the database but
// must not wait for the follower (CaughtUp). An error means the cache could
// not apply the change and can no longer prove itself current: the
// follower then resyncs every cache.
type Cache interface {
	Apply(ctx context.Context, e bus.Event) error
}

// CacheFunc adapts a function to Cache.
type CacheFunc func(ctx context.Context, e bus.Event) error

// Apply calls f.
func (f CacheFunc) Apply(ctx context.Context, e bus.Event) error { return f(ctx, e) }

// Log is the change log: every committed change. A position names what a
// read has seen; ChangesSince returns everything committed after it.
type Log interface {
	Position(ctx context.Context) (string, error)
	ChangesSince(ctx context.Context, pos string) ([]Change, string, error)
	PruneChangeLog(ctx context.Context) (int64, error)
}

// Change is one entry of the change log, as a bus event.
type Change struct {
	Seq   int64
	Event bus.Event
}

// Config tunes a Follower; its zero value works.
type Config struct {
	Logger       *slog.Logger
	PollInterval time.Duration // change-log poll; default 1 s
	QueueSize    int           // changes waiting to be applied; default 4096
	// Group, when set, is this instance among several: writes wait for the
	// others, and reads for this instance's leases (server/agree).
	Group *agree.Group
	// OnCatchUp, when set, is told of every read of the change log that
	// readers wait for, for metrics.
	OnCatchUp func()
}

// ErrClosed is returned by CaughtUp once the follower has stopped.
var ErrClosed = errors.New("change follower is closed")

// pollBatch is how many change-log entries one read takes.
const pollBatch = 1000

// logTimeout bounds each read of the change log.
const logTimeout = 30 * time.Second

// Follower applies committed changes to the caches of one instance.
type Follower struct {
	log    Log
	bus    bus.Publisher
	cfg    Config
	caches []Cache

	queue    chan item
	overflow atomic.Bool

	// handMu orders hand-overs: a change's number and its place in the
	// queue are taken together, so the queue holds them in number order.
	handMu sync.Mutex
	handed atomic.Uint64 // the newest number handed over
	// applied is the newest hand-over number applied (or made moot by a
	// resync); advanced is closed and replaced whenever it moves.
	applied  atomic.Uint64
	mu       sync.Mutex
	advanced chan struct{}

	group    *agree.Group
	catchUps chan chan error // readers waiting for a read of the change log

	lastPos string // change-log position; the loop's alone
	stop    context.CancelFunc
	done    chan struct{}
}

// item is one change to apply; seq is its hand-over number, 0 for changes
// from the bus or the change log.
type item struct {
	e   bus.Event
	seq uint64
}

// New returns a follower that reads log and publishes this instance's
// changes on pub (nil: publishes nothing beyond this instance). Start it.
func New(log Log, pub bus.Publisher, cfg Config) *Follower {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 4096
	}
	return &Follower{
		log: log, bus: pub, cfg: cfg,
		queue: make(chan item, cfg.QueueSize), advanced: make(chan struct{}), done: make(chan struct{}),
		group: cfg.Group, catchUps: make(chan chan error),
	}
}

// Start reads the change log's position and starts applying changes to
// caches, in the order given, each change to every cache before the next.
func (f *Follower) Start(ctx context.Context, caches ...Cache) error {
	began := f.now()
	pos, err := f.log.Position(ctx)
	if err != nil {
		return err
	}
	// The caches start empty and read the database when first asked: as
	// good as a read of the whole log at pos.
	f.lastPos = pos
	f.polled(began)
	f.caches = caches
	ctx, f.stop = context.WithCancel(context.WithoutCancel(ctx))
	go f.run(ctx)
	return nil
}

// Close stops the loop. Readers waiting in CaughtUp are released with
// ErrClosed.
func (f *Follower) Close() {
	if f.stop == nil {
		return
	}
	f.stop()
	<-f.done
	f.mu.Lock()
	close(f.advanced)
	f.advanced = nil
	f.mu.Unlock()
}

// Notify hands the follower a change from the bus. It never blocks (the bus
// calls it on its delivery goroutine); when the queue is full the follower
// resyncs instead.
func (f *Follower) Notify(e bus.Event) {
	if f.group != nil && !f.group.Observe(e) {
		return
	}
	select {
	case f.queue <- item{e: e}:
	default:
		f.overflow.Store(true)
		if f.group != nil {
			f.group.Lost() // a heartbeat queued later must not vouch for it
		}
	}
}

// Publish hands committed changes to this instance's caches and publishes
// them to every instance. Writers call it after commit and before they
// answer, so that CaughtUp covers them from then on. A failed publish
// leaves the other instances to the change-log poll; it is returned for
// logging only.
func (f *Follower) Publish(ctx context.Context, events ...bus.Event) error {
	var w agree.Write
	if f.group != nil && f.bus != nil && len(events) > 0 {
		w = f.group.Tag(events)
	}
	f.handMu.Lock()
	for _, e := range events {
		n := f.handed.Add(1)
		select {
		case f.queue <- item{e: e, seq: n}:
		default:
			// Numbered but never applied: the resync this causes stands for it.
			f.overflow.Store(true)
		}
	}
	f.handMu.Unlock()
	if f.bus == nil || len(events) == 0 {
		return nil
	}
	if f.group == nil {
		return f.bus.Publish(ctx, events...)
	}
	// Past the publish deadline the write no longer needs the bus: every
	// instance has read the change log since, or stopped answering.
	pctx, cancel := context.WithDeadline(ctx, f.group.PublishDeadline(w))
	err := f.bus.Publish(pctx, events...)
	cancel()
	f.group.Wait(w, err == nil)
	return err
}

var _ bus.Publisher = (*Follower)(nil)

// CaughtUp returns once every change handed over before the call has been
// applied to the caches, or when ctx ends. When this instance's leases have
// lapsed it also reads the change log, in a read that begins after the
// call, so that every change any instance has acknowledged is applied.
func (f *Follower) CaughtUp(ctx context.Context) error {
	if err := f.handedApplied(ctx); err != nil {
		return err
	}
	if f.group == nil || f.group.Fresh() {
		return nil
	}
	done := make(chan error, 1)
	select {
	case f.catchUps <- done:
	case <-f.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handedApplied waits until every change handed over before the call has
// been applied.
func (f *Follower) handedApplied(ctx context.Context) error {
	target := f.handed.Load()
	for f.applied.Load() < target {
		f.mu.Lock()
		ch := f.advanced
		f.mu.Unlock()
		if ch == nil {
			return ErrClosed
		}
		if f.applied.Load() >= target {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// advance records that hand-overs up to n are applied and wakes waiters.
func (f *Follower) advance(n uint64) {
	if n <= f.applied.Load() {
		return
	}
	f.applied.Store(n) // only the loop writes it
	f.mu.Lock()
	if f.advanced != nil {
		close(f.advanced)
		f.advanced = make(chan struct{})
	}
	f.mu.Unlock()
}

func (f *Follower) run(ctx context.Context) {
	defer close(f.done)
	poll := time.NewTicker(f.cfg.PollInterval)
	defer poll.Stop()
	prune := time.NewTicker(10 * time.Minute)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case it := <-f.queue:
			if it.e.Op == bus.OpPing {
				f.group.Confirmed(it.e.ID) // only the group queues heartbeats
				break
			}
			if f.apply(ctx, it.e) && f.group != nil && !f.overflow.Load() {
				f.group.Applied(it.e)
			}
			if it.seq > 0 {
				f.advance(it.seq)
			}
		case req := <-f.catchUps:
			// One read serves every reader already waiting: it begins
			// after each of them asked.
			reqs := []chan error{req}
			for more := true; more; {
				select {
				case r := <-f.catchUps:
					reqs = append(reqs, r)
				default:
					more = false
				}
			}
			if f.cfg.OnCatchUp != nil {
				f.cfg.OnCatchUp()
			}
			err := f.poll(ctx)
			if err != nil {
				err = apperr.DatabaseUnavailable(err) // the change log could not be read
			}
			for _, r := range reqs {
				r <- err
			}
		case <-poll.C:
			if err := f.poll(ctx); err != nil {
				f.cfg.Logger.Warn("poll change log", "err", err.Error())
			}
		case <-prune.C:
			if _, err := f.log.PruneChangeLog(ctx); err != nil {
				f.cfg.Logger.Warn("prune change log", "err", err.Error())
			}
		}
		if f.overflow.Swap(false) {
			f.resync(ctx, "change queue overflow")
		}
	}
}

// poll applies the change log entries committed since the last poll. Most
// were already applied through the bus or the write path; their versions
// make that cheap.
func (f *Follower) poll(ctx context.Context) error {
	began := f.now()
	rctx, cancel := context.WithTimeout(ctx, logTimeout)
	changes, pos, err := f.log.ChangesSince(rctx, f.lastPos)
	cancel()
	if err != nil {
		return err
	}
	ok := true
	for _, c := range changes {
		ok = f.apply(ctx, c.Event) && ok
	}
	f.lastPos = pos
	if ok {
		f.polled(began)
	}
	return nil
}

// now and polled are the group's clock and poll lease, when there is one.
func (f *Follower) now() time.Duration {
	if f.group == nil {
		return 0
	}
	return f.group.Now()
}

func (f *Follower) polled(began time.Duration) {
	if f.group != nil {
		f.group.Polled(began)
	}
}

// apply gives one change to every cache and reports whether every cache
// took it; a resync request becomes a resync of all of them.
func (f *Follower) apply(ctx context.Context, e bus.Event) bool {
	if e.Op == bus.OpResync {
		f.resync(ctx, "the bus may have lost messages")
		return false
	}
	ok := true
	for _, c := range f.caches {
		if err := c.Apply(ctx, e); err != nil {
			f.cfg.Logger.Warn("apply change", "env_id", e.EnvID, "flag_key", e.Key, "err", err.Error())
			f.overflow.Store(true)
			ok = false
		}
	}
	return ok
}

// resync moves the change-log position to now and makes every cache
// rebuild. The position is read first: whatever commits after it is polled
// again, and the rebuilt caches read everything committed before. Every
// hand-over so far is then moot, since the caches will read it afresh.
func (f *Follower) resync(ctx context.Context, why string) {
	handed := f.handed.Load()
	began := f.now()
	rctx, cancel := context.WithTimeout(ctx, logTimeout)
	pos, err := f.log.Position(rctx)
	cancel()
	if err == nil {
		f.lastPos = pos
	}
	e := bus.Event{Op: bus.OpResync}
	for _, c := range f.caches {
		_ = c.Apply(ctx, e) // dropping state cannot fail
	}
	f.cfg.Logger.Info("resync: caches rebuild from the database", "reason", why)
	if err == nil {
		f.polled(began) // the caches read the database afresh from here
	}
	f.advance(handed)
}
