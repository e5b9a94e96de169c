// Package measure is Switchyard's measurement: impressions, goal events,
// their rollups and folding, exposure, experiments and retention. It stands
// beside the control plane: identity (authentication, users, projects,
// environments, keys), core (flags, segments, governance) and notify
// (notifications); all of them ask server/access who may do what.
package measure

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Service runs the measurement operations against the database.
type Service struct {
	pool *pgxpool.Pool
	// reads is the measurement reads' own pool (Config.Reads).
	reads       *pgxpool.Pool
	readTimeout time.Duration
	logger      *slog.Logger
	now         func() time.Time
	gate        gate
}

// Config holds a Service's optional settings; its zero value works.
type Config struct {
	// Reads, when set, is the pool that measurement reads (statistics,
	// exposure, experiment results, flag status, export) run on: their own
	// bounded share of connections, each statement bounded too
	// (store.OpenBounded), so that slow reads never take a connection that
	// writes, authentication, the change follower or ingest need. The
	// service's pool when nil.
	Reads *pgxpool.Pool
	// ReadTimeout bounds a measurement read whole, its wait for one of
	// those connections included (the export's batches are bounded each by
	// the pool's statement timeout instead); none when 0.
	ReadTimeout time.Duration
	Logger      *slog.Logger     // discarded when nil
	Now         func() time.Time // the clock (exposure days, retention); time.Now when nil
	// MaxTail is the unfolded rows of one kind at which ingest waits for
	// the folder (gate.go): DefaultMaxTail when 0, no limit when negative
	// (tests that build a tail on purpose, with no folder running).
	MaxTail int
	// AdmitWait is the longest a batch waits at the gate before it is
	// taken anyway; 5 s when 0, shorter than the timeouts of the Go SDK's
	// reports (30 s) and of the OFREP impression writer (10 s), so that
	// the batch is taken rather than lost.
	AdmitWait time.Duration
	// GateWaited counts a batch that waited at the gate, GateOverflowed one
	// taken over the limit after AdmitWait (Prometheus counters); no-ops
	// when nil.
	GateWaited, GateOverflowed func()
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	s := &Service{pool: pool, reads: cfg.Reads, readTimeout: cfg.ReadTimeout, logger: cfg.Logger, now: cfg.Now}
	if s.reads == nil {
		s.reads = pool
	}
	s.gate.wait = cfg.AdmitWait
	s.gate.waited, s.gate.overflowed = cfg.GateWaited, cfg.GateOverflowed
	if s.gate.waited == nil {
		s.gate.waited = func() {}
	}
	if s.gate.overflowed == nil {
		s.gate.overflowed = func() {}
	}
	if s.gate.wait <= 0 {
		s.gate.wait = defaultAdmitWait
	}
	switch {
	case cfg.MaxTail == 0:
		s.gate.max = DefaultMaxTail
	case cfg.MaxTail > 0:
		s.gate.max = int64(cfg.MaxTail)
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// clamp limits a list parameter to lo..hi, def when absent.
func clamp(v *int32, def, lo, hi int32) int32 {
	if v == nil {
		return def
	}
	return min(max(*v, lo), hi)
}
