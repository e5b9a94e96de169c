package ofrep

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// Ingester stores what Exposures records; *measure.Service implements it.
type Ingester interface {
	IngestImpressions(ctx context.Context, p *auth.Principal, envID uuid.UUID, items []measure.ImpressionInput) error
	IngestSummaries(ctx context.Context, p *auth.Principal, envID uuid.UUID, items []measure.SummaryInput) error
}

// DefaultExposureMemory is how many (environment, flag, user, value)
// exposures the server remembers unless configured otherwise
// (OFREP_EXPOSURE_MEMORY): the Go SDK's default. Full, it takes about
// 70 MB (TestMemoryPerEntry); it fills only with the exposures actually
// seen.
const DefaultExposureMemory = 1_000_000

// ExposuresConfig tunes Exposures; its zero value works (and remembers
// nothing: one impression per evaluation).
type ExposuresConfig struct {
	Logger *slog.Logger
	// Memory is how many (environment, flag, user, value) exposures are
	// remembered as reported, those not evaluated recently forgotten first
	// (memory.go); 0 remembers none, so that every evaluation is an
	// impression.
	Memory    int
	QueueSize int // impressions waiting at most; default 10,000
	// SummaryRows is how many summary rows, one per (environment, flag,
	// value, UTC day), wait at most in each shard of the memory (16 from
	// 16,384 exposures up, else 1); default 10,000.
	SummaryRows   int
	FlushInterval time.Duration // default 1 s
	// Dropped counts an evaluation left unrecorded because its queue was
	// full: an impression, or a summary count that needed a new row (a
	// Prometheus counter).
	Dropped func()
	Now     func() time.Time // the clock; time.Now when nil
}

// Exposures records single-flag evaluations off the request path
// (docs/reference/ofrep.md, Impressions) the way the Go SDK reports its own
// (docs/reference/measurement.md, Reporting once): an impression the first
// time an (environment, flag, user, value) is seen within a bounded memory
// of recent exposures, and a count in a summary row per (environment, flag,
// value, UTC day) otherwise. Statistics then equal those of one impression
// per evaluation; the impression list shows first exposures only.
//
// Record never blocks: what waits is bounded, and what does not fit is
// dropped and counted. A background loop writes impressions in batches of
// up to measure.MaxBatchItems as they fill, and everything every flush
// interval and at Close, through the same ingest as SDK reports.
//
// A repeat evaluation, the common one, takes one lock: its exposure's shard
// of the memory, under which its count is added to the shard's own summary
// rows. No lock is shared by every evaluation, so a thread the operating
// system stops while it holds one delays a sixteenth of the evaluations,
// not all of them.
type Exposures struct {
	ing  Ingester
	cfg  ExposuresConfig
	seen *memory

	// mu guards the impressions waiting. A flush takes all of them at once.
	mu   sync.Mutex
	imps []pendingImpression

	// sums[i] is the summary rows waiting in the memory's shard i, guarded
	// by that shard's lock (memory.observe, memory.locked); rows counts
	// them all.
	sums    []map[summaryKey]*pendingSummary
	rows    atomic.Int64
	stopped atomic.Bool // set by Close: later evaluations are dropped and counted

	wake chan struct{} // a batch of impressions (or of summary rows) is full; capacity 1
	stop chan struct{}
	done chan struct{}
}

type pendingImpression struct {
	p                 *auth.Principal
	flag, user, value string
	at                time.Time
}

// summaryKey is a summary row waiting: day is the UTC day of its
// evaluations, counted from the Unix epoch, because the statistics file a
// summary under the day of its end (docs/reference/measurement.md,
// Summaries) and a row must not carry one day's evaluations into the next.
type summaryKey struct {
	env         uuid.UUID
	flag, value string
	day         int64
}

type pendingSummary struct {
	p          *auth.Principal // a key of the row's environment: ingest takes any of them
	count      int64
	start, end time.Time // the first and the last evaluation counted
}

// NewExposures returns a recorder writing to ing; Start it, and Close it to
// flush what waits.
func NewExposures(ing Ingester, cfg ExposuresConfig) *Exposures {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 10_000
	}
	if cfg.SummaryRows <= 0 {
		cfg.SummaryRows = 10_000
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.Dropped == nil {
		cfg.Dropped = func() {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := &Exposures{
		ing: ing, cfg: cfg, seen: newMemory(cfg.Memory),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	e.sums = make([]map[summaryKey]*pendingSummary, e.seen.shardCount())
	for i := range e.sums {
		e.sums[i] = map[summaryKey]*pendingSummary{}
	}
	return e
}

// Record reports one evaluation of flag for user (not empty), in p's
// environment, that returned value (rendered as an impression's value is),
// exactly once: as an impression when the exposure is not remembered, as a
// summary count otherwise.
func (e *Exposures) Record(p *auth.Principal, flag, user, value string) {
	e.seen.observe(e.seen.keyOf(p.EnvironmentID, flag, user, value), func(shard int, seen bool) bool {
		// The time is read under the exposure's lock, so its impression is
		// never later than an evaluation summarised after it.
		at := e.now()
		if seen {
			e.summarise(shard, p, flag, value, at)
			return false
		}
		// Remembered only when queued: a dropped impression leaves the
		// exposure new, so the user is recorded at its next evaluation.
		return e.impression(pendingImpression{p: p, flag: flag, user: user, value: value, at: at})
	})
}

// now is an evaluation's time at the microsecond precision PostgreSQL
// stores, so that a summary is filed under the UTC day its evaluations are.
func (e *Exposures) now() time.Time { return e.cfg.Now().UTC().Truncate(time.Microsecond) }

// impression queues x and reports whether it was queued (false: the queue
// is full or closed, and the evaluation is dropped and counted).
func (e *Exposures) impression(x pendingImpression) bool {
	e.mu.Lock()
	if e.stopped.Load() || len(e.imps) >= e.cfg.QueueSize {
		e.mu.Unlock()
		e.cfg.Dropped()
		return false
	}
	e.imps = append(e.imps, x)
	full := len(e.imps) >= measure.MaxBatchItems
	e.mu.Unlock()
	if full {
		e.nudge()
	}
	return true
}

// summarise counts one evaluation of flag that returned value at the time
// at in p's environment, in the rows of the memory's shard, whose lock the
// caller holds.
func (e *Exposures) summarise(shard int, p *auth.Principal, flag, value string, at time.Time) {
	if e.stopped.Load() {
		e.cfg.Dropped()
		return
	}
	k := summaryKey{env: p.EnvironmentID, flag: flag, value: value, day: utcDay(at)}
	rows := e.sums[shard]
	if s, ok := rows[k]; ok {
		s.add(at)
		return
	}
	if len(rows) >= e.cfg.SummaryRows {
		e.cfg.Dropped()
		return
	}
	// Copies: the row outlives the request by up to a flush interval.
	k.flag, k.value = strings.Clone(flag), strings.Clone(value)
	rows[k] = &pendingSummary{p: p, count: 1, start: at, end: at}
	if e.rows.Add(1) == measure.MaxBatchItems {
		e.nudge()
	}
}

// add counts one more evaluation at the time at. Times are read under
// different locks, so they may arrive a little out of order.
func (s *pendingSummary) add(at time.Time) {
	s.count++
	if at.Before(s.start) {
		s.start = at
	}
	if at.After(s.end) {
		s.end = at
	}
}

// merge adds the evaluations of o, a row of the same key.
func (s *pendingSummary) merge(o *pendingSummary) {
	s.count += o.count
	if o.start.Before(s.start) {
		s.start = o.start
	}
	if o.end.After(s.end) {
		s.end = o.end
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

// nudge asks the writer for an early flush; one already asked for covers
// this one.
func (e *Exposures) nudge() {
	select {
	case e.wake <- struct{}{}:
	default:
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
				e.stopped.Store(true)
				e.flush(true)
				return
			case <-tick.C:
				e.flush(true)
			case <-e.wake:
				// A full batch of impressions goes at once; summary rows
				// aggregate until the interval unless they fill a batch
				// themselves (fewer rows to store).
				e.flush(e.rows.Load() >= measure.MaxBatchItems)
			}
		}
	}()
}

// Close flushes what waits, impressions and summaries, and stops the
// writer; evaluations recorded afterwards are dropped and counted.
func (e *Exposures) Close() {
	close(e.stop)
	<-e.done
}

// flush writes the impressions queued, and the summary rows too when
// summaries is set, in batches per environment.
func (e *Exposures) flush(summaries bool) {
	e.mu.Lock()
	imps := e.imps
	e.imps = nil
	e.mu.Unlock()
	var sums map[summaryKey]*pendingSummary
	if summaries {
		sums = e.takeSummaries()
	}
	e.writeImpressions(imps)
	e.writeSummaries(sums)
}

// takeSummaries takes the rows waiting in every shard, merged: a row's
// evaluations wait in the shards of their users' exposures.
func (e *Exposures) takeSummaries() map[summaryKey]*pendingSummary {
	var all map[summaryKey]*pendingSummary
	for i := range e.sums {
		var rows map[summaryKey]*pendingSummary
		e.seen.locked(i, func() {
			if len(e.sums[i]) > 0 {
				rows = e.sums[i]
				e.sums[i] = make(map[summaryKey]*pendingSummary, len(rows))
			}
		})
		e.rows.Add(-int64(len(rows)))
		if all == nil {
			all = rows
			continue
		}
		for k, r := range rows {
			if a, ok := all[k]; ok {
				a.merge(r)
			} else {
				all[k] = r
			}
		}
	}
	return all
}

func (e *Exposures) writeImpressions(imps []pendingImpression) {
	var envs []uuid.UUID
	byEnv := map[uuid.UUID][]pendingImpression{}
	for _, x := range imps {
		env := x.p.EnvironmentID
		if _, ok := byEnv[env]; !ok {
			envs = append(envs, env)
		}
		byEnv[env] = append(byEnv[env], x)
	}
	for _, env := range envs {
		for b := range slices.Chunk(byEnv[env], measure.MaxBatchItems) {
			items := make([]measure.ImpressionInput, len(b))
			for i := range b {
				items[i] = measure.ImpressionInput{FlagKey: b[i].flag, UserID: &b[i].user, Value: b[i].value, EvaluatedAt: &b[i].at}
			}
			// Any key of the environment will do: ingest checks the
			// environment the key was authenticated for.
			if err := e.ingest(func(ctx context.Context) error { return e.ing.IngestImpressions(ctx, b[0].p, env, items) }); err != nil {
				// A deleted environment, or the database away: these
				// impressions are lost, as an SDK's would be. Their
				// exposures are forgotten, so that each user is recorded
				// at its next evaluation.
				e.cfg.Logger.Warn("record OFREP impressions", "env_id", env.String(), "impressions", len(b), "err", err.Error())
				for _, x := range b {
					e.seen.forget(e.seen.keyOf(env, x.flag, x.user, x.value))
				}
			}
		}
	}
}

func (e *Exposures) writeSummaries(sums map[summaryKey]*pendingSummary) {
	var envs []uuid.UUID
	byEnv := map[uuid.UUID][]measure.SummaryInput{}
	keys := map[uuid.UUID]*auth.Principal{}
	for k, s := range sums {
		if _, ok := byEnv[k.env]; !ok {
			envs = append(envs, k.env)
			keys[k.env] = s.p
		}
		byEnv[k.env] = append(byEnv[k.env], measure.SummaryInput{FlagKey: k.flag, Value: k.value, Count: s.count, Start: s.start, End: s.end})
	}
	for _, env := range envs {
		for b := range slices.Chunk(byEnv[env], measure.MaxBatchItems) {
			if err := e.ingest(func(ctx context.Context) error { return e.ing.IngestSummaries(ctx, keys[env], env, b) }); err != nil {
				var n int64
				for _, s := range b {
					n += s.Count
				}
				e.cfg.Logger.Warn("record OFREP evaluation summaries", "env_id", env.String(), "rows", len(b), "evaluations", n, "err", err.Error())
			}
		}
	}
}

// ingest runs one batch's write with its own time limit.
func (e *Exposures) ingest(write func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return write(ctx)
}
