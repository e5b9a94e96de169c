// Package events queues impressions, evaluation summaries and goal events
// and posts them in batches in the background. Evaluation never waits for
// it: what waits is bounded, and what does not fit is dropped and counted.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxBatch is the server's batch limit for impressions, summaries and goal
// events (docs/reference/limits.md, Requests: 500 items).
const maxBatch = 500

// Impression is one evaluation record (docs/reference/measurement.md,
// Impressions). Attributes never leave the process, so it carries no context.
type Impression struct {
	FlagKey     string    `json:"flag_key"`
	UserID      *string   `json:"user_id"`
	Value       string    `json:"value"`
	EvaluatedAt time.Time `json:"evaluated_at"`
}

// Summary is Count evaluations of FlagKey that returned Value, the first
// at Start and the last at End (docs/reference/measurement.md, Summaries).
// The server files a summary at its End, so a summary never spans two UTC
// days: its evaluations count on the day they happened.
type Summary struct {
	FlagKey string    `json:"flag_key"`
	Value   string    `json:"value"`
	Count   int64     `json:"count"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
}

// Goal is one goal event (docs/reference/measurement.md, Goal events).
type Goal struct {
	EventKey   string    `json:"event_key"`
	UserID     *string   `json:"user_id"`
	Value      *float64  `json:"value"`
	OccurredAt time.Time `json:"occurred_at"`
}

// Config configures a Queue.
type Config struct {
	// Capacity bounds the impressions and goal events waiting together;
	// default 10,000.
	Capacity int
	// SummaryCapacity bounds the summary rows waiting, one per (flag, value,
	// UTC day); default 10,000. Evaluations that would need another row are
	// dropped and counted.
	SummaryCapacity int
	FlushInterval   time.Duration // default 5 s
	// Post sends one batch to kind (a path relative to the environment); it
	// is called from the queue's goroutine only.
	Post func(ctx context.Context, kind string, body []byte) error
	// Ready reports whether Post can be called yet (the environment id is
	// known).
	Ready func() bool
	// Unsent, when set, receives the queued impressions the server never
	// accepted (a refused or failed batch, or left over at Close), from the
	// queue's goroutine, so that the caller can forget having reported them.
	Unsent func([]Impression)
	Logger *slog.Logger
}

// Kinds of batch: the paths they are posted to, relative to the environment.
const (
	KindImpressions = "impressions"
	KindSummaries   = "impressions/summaries"
	KindEvents      = "events"
)

// ErrClosed is returned by Flush after Close.
var ErrClosed = errors.New("events: queue closed")

// ErrNotReady is returned by Flush while the environment is unknown.
var ErrNotReady = errors.New("events: environment not known yet; nothing sent")

// summaryKey identifies a pending summary row: day is the UTC day of its
// evaluations, counted from the Unix epoch.
type summaryKey struct {
	flag, value string
	day         int64
}

type flushRequest struct {
	ctx  context.Context
	done chan error // buffered: the sender never waits for a departed caller
}

// Queue is the background sender.
type Queue struct {
	cfg Config

	// mu guards what waits to be sent. A flush takes all of it at once, so
	// everything reported before a flush starts is in that flush.
	mu      sync.Mutex
	imps    []Impression
	goals   []Goal
	sums    map[summaryKey]*Summary
	stopped bool // set by Close; later reports are dropped and counted

	kick    chan struct{} // a batch is full; capacity 1
	flushes chan flushRequest
	closing chan context.Context
	done    chan struct{}

	c counters
}

type counters struct {
	sent, dropped                                    atomic.Int64
	impressions, impSent, impDropped                 atomic.Int64
	summarised, sumSent, sumDropped, summaryRowsSent atomic.Int64
}

// Counters are a Queue's cumulative counts.
type Counters struct {
	Sent    int64 // impressions and goal events the server accepted
	Dropped int64 // impressions and goal events dropped: queue full, or not accepted

	Impressions        int64 // impressions reported (queued, or dropped because the queue was full)
	ImpressionsSent    int64 // of them, accepted by the server
	ImpressionsDropped int64 // of them, dropped: queue full, batch not accepted, unsent at Close

	Summarised        int64 // evaluations reported as a summary count
	SummarisedSent    int64 // of them, in summaries the server accepted
	SummarisedDropped int64 // of them, dropped: too many rows waiting, batch not accepted, unsent at Close
	SummaryRowsSent   int64 // summary rows the server accepted
}

// New starts a queue.
func New(cfg Config) *Queue {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 10_000
	}
	if cfg.SummaryCapacity <= 0 {
		cfg.SummaryCapacity = 10_000
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	q := &Queue{
		cfg: cfg, sums: map[summaryKey]*Summary{},
		kick: make(chan struct{}, 1), flushes: make(chan flushRequest), closing: make(chan context.Context),
		done: make(chan struct{}),
	}
	go q.run()
	return q
}

// Impression queues an impression without blocking and reports whether it
// was queued (false: the queue is full or closed, and the impression is
// dropped and counted).
func (q *Queue) Impression(i Impression) bool {
	q.c.impressions.Add(1)
	q.mu.Lock()
	if q.stopped || len(q.imps)+len(q.goals) >= q.cfg.Capacity {
		q.mu.Unlock()
		q.c.impDropped.Add(1)
		q.c.dropped.Add(1)
		return false
	}
	q.imps = append(q.imps, i)
	full := len(q.imps) >= maxBatch
	q.mu.Unlock()
	if full {
		q.nudge()
	}
	return true
}

// Goal queues a goal event without blocking.
func (q *Queue) Goal(g Goal) {
	q.mu.Lock()
	if q.stopped || len(q.imps)+len(q.goals) >= q.cfg.Capacity {
		q.mu.Unlock()
		q.c.dropped.Add(1)
		return
	}
	q.goals = append(q.goals, g)
	full := len(q.goals) >= maxBatch
	q.mu.Unlock()
	if full {
		q.nudge()
	}
}

// Summarise counts one evaluation of flagKey that returned value at the
// time at, without blocking.
func (q *Queue) Summarise(flagKey, value string, at time.Time) {
	q.c.summarised.Add(1)
	k := summaryKey{flag: flagKey, value: value, day: utcDay(at)}
	q.mu.Lock()
	if s, ok := q.sums[k]; ok {
		s.Count++
		// Times are taken under different locks, so they may arrive a
		// little out of order.
		if at.Before(s.Start) {
			s.Start = at
		}
		if at.After(s.End) {
			s.End = at
		}
		q.mu.Unlock()
		return
	}
	if q.stopped || len(q.sums) >= q.cfg.SummaryCapacity {
		q.mu.Unlock()
		q.c.sumDropped.Add(1)
		return
	}
	// Copies: the row may outlive the caller's strings by a flush interval.
	k.flag, k.value = strings.Clone(flagKey), strings.Clone(value)
	q.sums[k] = &Summary{FlagKey: k.flag, Value: k.value, Count: 1, Start: at, End: at}
	full := len(q.sums) >= maxBatch
	q.mu.Unlock()
	if full {
		q.nudge()
	}
}

// utcDay is the UTC day of t, counted from the Unix epoch (floored).
func utcDay(t time.Time) int64 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d--
	}
	return d
}

// nudge asks the sender for an early flush; a flush already asked for
// covers this one.
func (q *Queue) nudge() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// Counters returns the cumulative counts. The outcomes are read before the
// totals, so a total is never less than its outcomes.
func (q *Queue) Counters() Counters {
	var c Counters
	c.ImpressionsSent, c.ImpressionsDropped = q.c.impSent.Load(), q.c.impDropped.Load()
	c.SummarisedSent, c.SummarisedDropped = q.c.sumSent.Load(), q.c.sumDropped.Load()
	c.SummaryRowsSent = q.c.summaryRowsSent.Load()
	c.Sent, c.Dropped = q.c.sent.Load(), q.c.dropped.Load()
	c.Impressions, c.Summarised = q.c.impressions.Load(), q.c.summarised.Load()
	return c
}

// Dropped counts impressions and goal events dropped: queue full, or a
// batch the server refused or could not be reached for.
func (q *Queue) Dropped() int64 { return q.c.dropped.Load() }

// Sent counts impressions and goal events the server accepted.
func (q *Queue) Sent() int64 { return q.c.sent.Load() }

// Flush sends everything reported so far and returns when the server has
// answered every batch: nil when it accepted them all. Nothing is retried.
func (q *Queue) Flush(ctx context.Context) error {
	r := flushRequest{ctx: ctx, done: make(chan error, 1)}
	select {
	case q.flushes <- r:
	case <-q.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close sends what is queued (within ctx) and stops. Reports made after
// Close are dropped and counted.
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
	timed := func(summaries bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.flush(ctx, summaries) // failures are logged and counted
	}
	for {
		select {
		case <-q.kick:
			// A full batch of impressions or goal events goes at once;
			// summaries aggregate until the interval, unless they fill a
			// batch themselves (fewer rows at the server).
			q.mu.Lock()
			summaries := len(q.sums) >= maxBatch
			q.mu.Unlock()
			timed(summaries)
		case <-tick.C:
			timed(true)
		case r := <-q.flushes:
			r.done <- q.flush(r.ctx, true)
		case ctx := <-q.closing:
			q.mu.Lock()
			q.stopped = true
			q.mu.Unlock()
			_ = q.flush(ctx, true)
			// Left over only when the environment never became known.
			q.mu.Lock()
			imps, goals, sums := q.imps, q.goals, q.sums
			q.imps, q.goals, q.sums = nil, nil, nil
			q.mu.Unlock()
			q.lost(imps, len(goals), sums)
			return
		}
	}
}

// lost counts what will never be sent.
func (q *Queue) lost(imps []Impression, goals int, sums map[summaryKey]*Summary) {
	q.c.impDropped.Add(int64(len(imps)))
	q.c.dropped.Add(int64(len(imps) + goals))
	for _, s := range sums {
		q.c.sumDropped.Add(s.Count)
	}
	if len(imps) > 0 && q.cfg.Unsent != nil {
		q.cfg.Unsent(imps)
	}
}

// flush sends what waits: impressions and goal events, and the summaries
// too when summaries is set. It returns an error when a batch was not
// accepted (that batch is dropped and counted: reporting is fire and
// forget) or the environment is not known yet (everything keeps waiting).
func (q *Queue) flush(ctx context.Context, summaries bool) error {
	if q.cfg.Ready != nil && !q.cfg.Ready() {
		return ErrNotReady
	}
	q.mu.Lock()
	imps, goals := q.imps, q.goals
	q.imps, q.goals = nil, nil
	var sums map[summaryKey]*Summary
	if summaries && len(q.sums) > 0 {
		sums = q.sums
		q.sums = make(map[summaryKey]*Summary, len(sums))
	}
	q.mu.Unlock()

	var failed []error
	note := func(kind string, n int, err error) {
		q.cfg.Logger.Warn("switchyard: dropping a batch of "+kind, "count", n, "err", err.Error())
		failed = append(failed, fmt.Errorf("%d %s: %w", n, kind, err))
	}
	for b := range slices.Chunk(imps, maxBatch) {
		if err := q.post(ctx, KindImpressions, b); err != nil {
			note(KindImpressions, len(b), err)
			q.lost(b, 0, nil)
		} else {
			q.c.impSent.Add(int64(len(b)))
			q.c.sent.Add(int64(len(b)))
		}
	}
	for b := range slices.Chunk(goals, maxBatch) {
		if err := q.post(ctx, KindEvents, b); err != nil {
			note(KindEvents, len(b), err)
			q.c.dropped.Add(int64(len(b)))
		} else {
			q.c.sent.Add(int64(len(b)))
		}
	}
	rows := make([]Summary, 0, len(sums))
	for _, s := range sums {
		rows = append(rows, *s)
	}
	for b := range slices.Chunk(rows, maxBatch) {
		var n int64
		for _, s := range b {
			n += s.Count
		}
		if err := q.post(ctx, KindSummaries, b); err != nil {
			note(KindSummaries, len(b), err)
			q.c.sumDropped.Add(n)
		} else {
			q.c.sumSent.Add(n)
			q.c.summaryRowsSent.Add(int64(len(b)))
		}
	}
	return errors.Join(failed...)
}

func (q *Queue) post(ctx context.Context, kind string, items any) error {
	body, err := json.Marshal(items)
	if err != nil {
		return fmt.Errorf("encode %s: %w", kind, err)
	}
	return q.cfg.Post(ctx, kind, body)
}
