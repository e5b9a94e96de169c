package identity

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/bus"
)

// Service runs Switchyard's identity operations against the database:
// authentication, users, members, tokens, SDK keys, projects,
// environments, the workspace and the first-boot seed.
type Service struct {
	pool         *pgxpool.Pool
	logger       *slog.Logger
	now          func() time.Time
	legacySDKKey string
	sealer       *auth.Sealer
	bus          bus.Publisher
	keys         *keyCache
	trail        *audit.Trail
	rec          recorder
}

// Config holds a Service's optional settings; its zero value works.
type Config struct {
	// Trail records every write in the workspace audit trail, in the
	// write's transaction; nil records with a development key.
	Trail        *audit.Trail
	Logger       *slog.Logger     // discarded when nil
	Now          func() time.Time // the clock (lockouts, sessions, token expiry); time.Now when nil
	LegacySDKKey string           // SDK_KEY: one extra accepted SDK key without a stored record
	Sealer       *auth.Sealer     // seals session cookies; required for sessions
	Bus          bus.Publisher    // where committed changes are announced; none when nil
	// CaughtUp, when set, is called before the SDK-key cache is trusted:
	// it returns once the cache holds every revocation any instance has
	// acknowledged (follow.Follower.CaughtUp).
	CaughtUp func(context.Context) error
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	s := &Service{keys: newKeyCache(cfg.CaughtUp), pool: pool, logger: cfg.Logger, now: cfg.Now, legacySDKKey: cfg.LegacySDKKey, sealer: cfg.Sealer, bus: cfg.Bus, trail: cfg.Trail, rec: recorder{trail: cfg.Trail}}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// publish announces committed changes (bus.PublishCommitted).
func (s *Service) publish(ctx context.Context, events ...bus.Event) {
	bus.PublishCommitted(ctx, s.bus, s.logger, events...)
}
