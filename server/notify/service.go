package notify

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/switchyard/switchyard/server/audit"
)

// Service runs Switchyard's notifications against the database: the
// delivery of the outbox that Enqueue fills, and the webhooks and chat
// integrations it delivers to.
type Service struct {
	pool     *pgxpool.Pool
	logger   *slog.Logger
	now      func() time.Time
	notifier *Client
	backoff  []time.Duration
	lease    time.Duration
	trail    *audit.Trail
}

// ServiceConfig holds a Service's optional settings; its zero value works.
type ServiceConfig struct {
	// Trail records every write in the workspace audit trail, in the
	// write's transaction; nil records with a development key.
	Trail    *audit.Trail
	Logger   *slog.Logger     // discarded when nil
	Now      func() time.Time // the clock (the test message's time); time.Now when nil
	Notifier *Client          // sends webhooks and chat alerts; a default client when nil
	// NotifyBackoff is the wait before each retry of a failed webhook or chat
	// delivery; notify.DefaultBackoff (1 s, 5 s, 15 s) when nil. Tests shorten it.
	NotifyBackoff []time.Duration
	// NotifyLease is how long a claimed notification stays reserved for its
	// sender between two renewals; notificationLease (10 s) when zero. Tests
	// shorten it.
	NotifyLease time.Duration
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool, cfg ServiceConfig) *Service {
	s := &Service{pool: pool, logger: cfg.Logger, now: cfg.Now,
		notifier: cfg.Notifier, backoff: cfg.NotifyBackoff, lease: cfg.NotifyLease, trail: cfg.Trail}
	if s.notifier == nil {
		s.notifier = NewClient(Config{})
	}
	if s.lease <= 0 {
		s.lease = notificationLease
	}
	if s.backoff == nil {
		s.backoff = DefaultBackoff
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}
