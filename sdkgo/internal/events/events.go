// Package events queues impressions and goal events and posts them in
// batches in the background. Evaluation never waits for it: the queue is
// bounded, and when it is full events are dropped and counted.
package events

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"
)

// maxBatch is the server's batch limit (spec, Limits: 500 items).
const maxBatch = 500

// Impression is one evaluation record (spec, Impression). Attributes never
// leave the process, so it carries no context.
type Impression struct {
	FlagKey     string    `json:"flag_key"`
	UserID      *string   `json:"user_id"`
	Value       string    `json:"value"`
	EvaluatedAt time.Time `json:"evaluated_at"`
}

// Goal is one goal event (spec, Goal event).
type Goal struct {
	EventKey   string    `json:"event_key"`
	UserID     *string   `json:"user_id"`
	Value      *float64  `json:"value"`
	OccurredAt time.Time `json:"occurred_at"`
}

// Config configures a Queue.
type Config struct {
	Capacity      int           // events held at most; default 10,000
	FlushInterval time.Duration // default 5 s
	// Post sends one batch to path (relative to the environment); it is
	// called from the queue's goroutine only.
	Post func(ctx context.Context, kind string, body []byte) error
	// Ready reports whether Post can be called yet (the environment id is
	// known).
	Ready  func() bool
	Logger *slog.Logger
}

// Kinds of batch.
const (
	KindImpressions = "impressions"
	KindEvents      = "events"
)

type item struct {
	imp  *Impression
	goal *Goal
}

// Queue is the background sender.
type Queue struct {
	cfg     Config
	ch      chan item
	closing chan context.Context
	done    chan struct{}
	dropped atomic.Int64
	sent    atomic.Int64
}

// New starts a queue.
func New(cfg Config) *Queue {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 10_000
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	q := &Queue{cfg: cfg, ch: make(chan item, cfg.Capacity), closing: make(chan context.Context), done: make(chan struct{})}
	go q.run()
	return q
}

// Impression queues an impression without blocking.
func (q *Queue) Impression(i Impression) { q.put(item{imp: &i}) }

// Goal queues a goal event without blocking.
func (q *Queue) Goal(g Goal) { q.put(item{goal: &g}) }

func (q *Queue) put(it item) {
	select {
	case q.ch <- it:
	default:
		q.dropped.Add(1)
	}
}

// Dropped counts events dropped: queue full, or a batch the server refused
// or could not be reached for.
func (q *Queue) Dropped() int64 { return q.dropped.Load() }

// Sent counts events the server accepted.
func (q *Queue) Sent() int64 { return q.sent.Load() }

// Close sends what is queued (within ctx) and stops.
func (q *Queue) Close(ctx context.Context) {
	select {
	case q.closing <- ctx:
		<-q.done
	case <-q.done:
	}
}

func (q *Queue) run() {
	defer close(q.done)
	tick := time.NewTicker(q.cfg.FlushInterval)
	defer tick.Stop()
	var imps []Impression
	var goals []Goal
	add := func(it item) {
		if it.imp != nil {
			imps = append(imps, *it.imp)
		} else {
			goals = append(goals, *it.goal)
		}
	}
	flush := func(ctx context.Context) {
		if q.cfg.Ready != nil && !q.cfg.Ready() {
			// Nowhere to send yet; keep at most Capacity, oldest dropped.
			if over := len(imps) + len(goals) - q.cfg.Capacity; over > 0 {
				n := min(over, len(imps))
				imps = imps[n:]
				q.dropped.Add(int64(n))
			}
			return
		}
		imps = send(q, ctx, KindImpressions, imps)
		goals = send(q, ctx, KindEvents, goals)
	}
	for {
		select {
		case it := <-q.ch:
			add(it)
			if len(imps) >= maxBatch || len(goals) >= maxBatch {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				flush(ctx)
				cancel()
			}
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			flush(ctx)
			cancel()
		case ctx := <-q.closing:
			for drained := false; !drained; {
				select {
				case it := <-q.ch:
					add(it)
				default:
					drained = true
				}
			}
			flush(ctx)
			q.dropped.Add(int64(len(imps) + len(goals))) // never sent
			return
		}
	}
}

// send posts items in batches of at most 500 and returns what is left
// (nothing: failed batches are dropped and counted, fire-and-forget).
func send[T any](q *Queue, ctx context.Context, kind string, items []T) []T {
	for len(items) > 0 {
		n := min(len(items), maxBatch)
		body, err := json.Marshal(items[:n])
		if err == nil {
			err = q.cfg.Post(ctx, kind, body)
		}
		if err != nil {
			q.cfg.Logger.Warn("switchyard: dropping a batch of "+kind, "count", n, "err", err.Error())
			q.dropped.Add(int64(n))
		} else {
			q.sent.Add(int64(n))
		}
		items = items[n:]
	}
	return items[:0]
}
