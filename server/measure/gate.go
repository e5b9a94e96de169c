package measure

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Reads add up the unfolded tail (read.go), so a read costs time in proportion
// to it, and the folder folds only so many rows a second (the per-user rollups
// cost a few index insertions per row). Ingest faster than that for long would
// grow the tail, and every read with it, without bound; it is also not a rate
// the server can sustain, only one it can defer. So ingest passes a gate first,
// which keeps reads from waiting on a backlog (docs/reference/measurement.md,
// Fresh reads): while the unfolded rows of its kind reach the tail limit, a batch
// waits for the folder before it is copied. Below the limit the gate costs an
// occasional query; at it, acknowledgements slow to the fold's pace and the
// tail, and with it every read, stays bounded whatever the ingest.
//
// The gate counts from the database (the largest ids against the
// watermarks), so it holds across instances, plus the rows this instance
// admitted since it last looked. A batch waits at most Config.AdmitWait: if the
// folder cannot catch up in that time (it is failing, or another instance
// holds a long fold), the batch is taken anyway, because refusing it would
// make clients drop measurements, and a longer tail only slows reads.

// DefaultMaxTail is the unfolded rows of one kind at which ingest waits
// for the folder: a read adds up at most about this many raw rows, a
// quarter of a second's work on the development machine under load
// (docs/performance.md).
const DefaultMaxTail = 25_000

const (
	// gateProbeEvery is how old a look at the backlog may be before an
	// admission looks again.
	gateProbeEvery = 50 * time.Millisecond
	// defaultAdmitWait is the longest a batch waits at the gate.
	defaultAdmitWait = 5 * time.Second
)

// Gate kinds, indexes into tails.
const (
	gateImpressions = iota
	gateEvents
	gateSummaries
	gateKinds
)

// gate holds ingest back while the unfolded tail is at its limit.
type gate struct {
	max  int64         // per kind; no gate when <= 0
	wait time.Duration // the longest a batch waits

	waited, overflowed func() // Config.GateWaited, Config.GateOverflowed

	mu       sync.Mutex
	tails    [gateKinds]int64 // unfolded rows at the last look plus rows admitted since
	lookedAt time.Time
	looking  chan struct{} // non-nil while a look is under way; closed when it ends
	// folded is closed (and replaced) when this instance's folder has folded
	// a turn, so that batches held at the limit look again at once instead
	// of at the next probe; nil until a batch waits for it.
	folded chan struct{}
	held   int // batches waiting at the limit; the folder does not rest while there are any
}

// foldedTurn tells the gate that this instance's folder has just moved a
// watermark: the last look is stale, and the batches held at the limit look
// again now.
func (g *gate) foldedTurn() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lookedAt = time.Time{}
	if g.folded != nil {
		close(g.folded)
		g.folded = nil
	}
}

// holding reports whether batches are waiting at the limit.
func (g *gate) holding() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held > 0
}

// admit returns once n rows of kind may be copied: at once while the tail
// is under the limit, else when the folder has brought it under, or after
// the gate's wait. It looks at the backlog (one query, outside the lock) when
// its last look is older than gateProbeEvery; concurrent callers share a
// look.
func (s *Service) admit(ctx context.Context, kind int, n int) error {
	g := &s.gate
	if g.max <= 0 || n == 0 {
		return nil
	}
	deadline := time.Now().Add(g.wait)
	held := false // the batch found the tail at its limit
	defer func() {
		if held {
			g.mu.Lock()
			g.held--
			g.mu.Unlock()
		}
	}()
	for {
		g.mu.Lock()
		if time.Since(g.lookedAt) < gateProbeEvery {
			// A batch larger than the limit goes in alone, once the tail is
			// empty.
			if g.tails[kind] == 0 || g.tails[kind]+int64(n) <= g.max {
				g.tails[kind] += int64(n)
				g.mu.Unlock()
				if held {
					g.waited()
				}
				return nil
			}
			if !held {
				held = true
				g.held++
			}
			if time.Now().After(deadline) {
				g.tails[kind] += int64(n)
				unfolded := g.tails[kind]
				g.mu.Unlock()
				g.overflowed()
				s.logger.WarnContext(ctx, "ingest admitted over the tail limit: the fold is not keeping up",
					slog.Int64("unfolded", unfolded), slog.Int64("limit", g.max))
				return nil
			}
		}
		wait, look := g.looking, false
		var folded chan struct{}
		if wait == nil {
			if time.Since(g.lookedAt) < gateProbeEvery {
				// Fresh but over the limit: wait for the next look, or for
				// this instance's folder, whichever comes first.
				wait = make(chan struct{})
				time.AfterFunc(time.Until(g.lookedAt.Add(gateProbeEvery)), func() { close(wait) })
				if g.folded == nil {
					g.folded = make(chan struct{})
				}
				folded = g.folded
			} else {
				g.looking = make(chan struct{})
				wait, look = g.looking, true
			}
		}
		g.mu.Unlock()
		if look {
			s.lookAtBacklog(ctx)
		}
		select {
		case <-wait:
		case <-folded:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// lookAtBacklog reads the unfolded rows of each kind and publishes them to
// the gate, waking the callers waiting for a look. A failed look keeps
// the previous counts until the next: the COPY that follows meets the same
// database and reports its error.
func (s *Service) lookAtBacklog(ctx context.Context) {
	g := &s.gate
	// The look serves every waiter: one departing client must not fail it.
	tails, err := s.backlog(context.WithoutCancel(ctx))
	g.mu.Lock()
	if err == nil {
		g.tails = tails
	}
	g.lookedAt = time.Now()
	close(g.looking)
	g.looking = nil
	g.mu.Unlock()
}

// backlog returns the unfolded rows of each kind (lookAtIds).
func (s *Service) backlog(ctx context.Context) ([gateKinds]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	high, marks, err := s.lookAtIds(ctx)
	return high.minus(marks), err
}
