package ofrep

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// Ingester stores impressions; *measure.Service implements it.
type Ingester interface {
	IngestImpressions(ctx context.Context, p *auth.Principal, envID uuid.UUID, items []measure.ImpressionInput) error
}

// ExposuresConfig tunes Exposures; its zero value works.
type ExposuresConfig struct {
	Logger        *slog.Logger
	QueueSize     int           // impressions waiting at most; default 10,000
	FlushInterval time.Duration // default 1 s
	Dropped       func()        // counts an impression dropped on a full queue (a Prometheus counter)
}

// Exposures turns single-flag evaluations into impressions off the request path
// (docs/reference/ofrep.md, Impressions): Add never blocks, a full queue drops
// and counts, as the Go SDK's event queue does, and a background loop writes
// batches of up to measure.MaxBatchItems through the same ingest as SDK
// reports.
type Exposures struct {
	ing  Ingester
	cfg  ExposuresConfig
	mu   sync.Mutex
	q    []exposure
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

type exposure struct {
	p    *auth.Principal
	item measure.ImpressionInput
}

// NewExposures returns a queue writing to ing; Start it, and Close it to
// flush what waits.
func NewExposures(ing Ingester, cfg ExposuresConfig) *Exposures {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 10_000
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.Dropped == nil {
		cfg.Dropped = func() {}
	}
	return &Exposures{ing: ing, cfg: cfg, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Add queues one impression of p's environment, or drops it when the queue
// is full.
func (e *Exposures) Add(p *auth.Principal, item measure.ImpressionInput) {
	e.mu.Lock()
	if len(e.q) >= e.cfg.QueueSize {
		e.mu.Unlock()
		e.cfg.Dropped()
		return
	}
	e.q = append(e.q, exposure{p: p, item: item})
	full := len(e.q) >= measure.MaxBatchItems
	e.mu.Unlock()
	if full {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// Start runs the writer until Close.
func (e *Exposures) Start() {
	go func() {
		defer close(e.done)
		tick := time.NewTicker(e.cfg.FlushInterval)
		defer tick.Stop()
		for {
			select {
			case <-e.stop:
				e.flush()
				return
			case <-tick.C:
			case <-e.wake:
			}
			e.flush()
		}
	}()
}

// Close flushes what waits and stops the writer.
func (e *Exposures) Close() {
	close(e.stop)
	<-e.done
}

// flush writes everything queued, in batches per key and environment.
func (e *Exposures) flush() {
	e.mu.Lock()
	q := e.q
	e.q = nil
	e.mu.Unlock()
	type target struct {
		keyID int64
		env   uuid.UUID
	}
	var order []target
	batches := map[target][]exposure{}
	for _, x := range q {
		t := target{x.p.KeyID, x.p.EnvironmentID}
		if _, ok := batches[t]; !ok {
			order = append(order, t)
		}
		batches[t] = append(batches[t], x)
	}
	for _, t := range order {
		b := batches[t]
		for len(b) > 0 {
			n := min(len(b), measure.MaxBatchItems)
			items := make([]measure.ImpressionInput, n)
			for i := range n {
				items[i] = b[i].item
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := e.ing.IngestImpressions(ctx, b[0].p, t.env, items); err != nil {
				// A key revoked since, or the database away: these impressions
				// are lost, as an SDK's would be.
				e.cfg.Logger.Warn("record OFREP impressions", "env_id", t.env.String(), "impressions", n, "err", err.Error())
			}
			cancel()
			b = b[n:]
		}
	}
}
