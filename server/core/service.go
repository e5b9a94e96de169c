package core

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/notify"
)

// Service runs Switchyard's business operations against the database.
type Service struct {
	pool     *pgxpool.Pool
	logger   *slog.Logger
	now      func() time.Time
	bus      bus.Publisher
	notifier *notify.Client
	backoff  []time.Duration
	lease    time.Duration
}

// Config holds a Service's optional settings; its zero value works.
type Config struct {
	Logger   *slog.Logger     // discarded when nil
	Now      func() time.Time // the clock (schedules, change log retention); time.Now when nil
	Bus      bus.Publisher    // where committed changes are announced; none when nil
	Notifier *notify.Client   // sends webhooks and chat alerts; a default client when nil
	// NotifyBackoff is the wait before each retry of a failed webhook or chat
	// delivery; notify.DefaultBackoff (1 s, 5 s, 15 s) when nil. Tests shorten it.
	NotifyBackoff []time.Duration
	// NotifyLease is how long a claimed notification stays reserved for its
	// sender between two renewals; notificationLease (10 s) when zero. Tests
	// shorten it.
	NotifyLease time.Duration
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	s := &Service{pool: pool, logger: cfg.Logger, now: cfg.Now, bus: cfg.Bus,
		notifier: cfg.Notifier, backoff: cfg.NotifyBackoff, lease: cfg.NotifyLease}
	if s.notifier == nil {
		s.notifier = notify.NewClient(notify.Config{})
	}
	if s.lease <= 0 {
		s.lease = notificationLease
	}
	if s.backoff == nil {
		s.backoff = notify.DefaultBackoff
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}
