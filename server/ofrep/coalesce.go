package ofrep

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
)

// A change wakes every event stream of the environment at once, and each
// needs the environment's new tag for its notice. Read one by one, ten
// thousand streams would take the hub's table lock ten thousand times in
// the same millisecond, and queue on it, which /stream (handed its frames
// by the hub) never does. envReads coalesces them: the streams woken by a
// change share one read.

// envRead is one read of an environment for every stream that joined it.
type envRead struct {
	done chan struct{}
	env  Environment
	err  error
}

// envReads coalesces the reads of one environment. Every stream that joins
// a read arrived before the read started, so the read sees at least the
// change that woke it; a stream arriving while a read runs (which may have
// started before that stream's change) waits for the next read, which
// starts when the running one ends. At most one read runs, and a burst of
// wake-ups costs at most two.
type envReads struct {
	mu      sync.Mutex
	running *envRead // started; nil when none
	next    *envRead // taking joiners; starts when running ends
}

// coalescedReadTimeout bounds a shared read: it runs for many streams, so
// no one stream's cancellation may end it.
const coalescedReadTimeout = 10 * time.Second

// get returns the environment as read after the caller arrived.
func (e *envReads) get(ctx context.Context, read func(context.Context) (Environment, error)) (Environment, error) {
	e.mu.Lock()
	if c := e.next; c != nil {
		e.mu.Unlock()
		select {
		case <-c.done:
			return c.env, c.err
		case <-ctx.Done():
			return Environment{}, ctx.Err()
		}
	}
	c := &envRead{done: make(chan struct{})}
	e.next = c
	prev := e.running
	e.mu.Unlock()
	if prev != nil {
		<-prev.done // bounded by its own timeout
	}
	e.mu.Lock()
	e.next, e.running = nil, c // no more joiners: c starts after all of them
	e.mu.Unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), coalescedReadTimeout)
	c.env, c.err = read(rctx)
	cancel()
	e.mu.Lock()
	e.running = nil
	e.mu.Unlock()
	close(c.done)
	return c.env, c.err
}

// environmentForStream reads envID's flags for an event stream, coalesced
// with the other streams of the environment.
func (h *Handler) environmentForStream(ctx context.Context, envID uuid.UUID) (Environment, error) {
	v, ok := h.reads.Load(envID)
	if !ok {
		v, _ = h.reads.LoadOrStore(envID, &envReads{})
	}
	return v.(*envReads).get(ctx, func(ctx context.Context) (Environment, error) {
		return h.cfg.Flags.Environment(ctx, envID)
	})
}
