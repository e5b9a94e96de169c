package core

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/bus"
)

// Service runs the operations on flags, segments and their governance
// against the database.
type Service struct {
	pool     *pgxpool.Pool
	logger   *slog.Logger
	now      func() time.Time
	bus      bus.Publisher
	releases ReleaseGuard
	trail    *audit.Trail
}

// Config holds a Service's optional settings; its zero value works.
type Config struct {
	// Trail records every write in the workspace audit trail, in the
	// write's transaction; nil records with a development key.
	Trail  *audit.Trail
	Logger *slog.Logger     // discarded when nil
	Now    func() time.Time // the clock (schedules); time.Now when nil
	Bus    bus.Publisher    // where committed changes are announced; none when nil
	// Releases is told of people's flag writes, so that guarded releases
	// cancel themselves; none when nil.
	Releases ReleaseGuard
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	s := &Service{pool: pool, logger: cfg.Logger, now: cfg.Now, bus: cfg.Bus, releases: cfg.Releases, trail: cfg.Trail}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}
