package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pingTimeout bounds the connectivity check in Open, so a wrong DATABASE_URL
// fails startup quickly instead of hanging.
const pingTimeout = 10 * time.Second

// defaultConnectTimeout bounds each new connection when DATABASE_URL sets no
// connect_timeout (and each liveness ping unless pool_ping_timeout is set). Without it a dial to an unreachable host waits for the
// kernel (minutes), and so would every request during an outage; with it the
// request fails with a connect error, answered 503 (see Unreachable). A
// refused connection (the server is down, the host is up) fails at once
// either way.
const defaultConnectTimeout = 5 * time.Second

// Open connects a pool to databaseURL with at most maxConns connections
// (pgxpool's default when maxConns < 1) and pings the server once.
//
// The pool outlives database outages by itself: pgxpool pings a connection
// that sat idle for over a second before handing it out and replaces it when
// the ping fails, drops connections that broke during use, and dials anew on
// demand. So after PostgreSQL restarts, requests succeed again as soon as it
// accepts connections; nothing here needs restarting.
func Open(ctx context.Context, databaseURL string, maxConns int32) (*pgxpool.Pool, error) {
	return open(ctx, databaseURL, maxConns, 0)
}

// OpenBounded is Open for a pool whose every statement ends after
// statementTimeout (PostgreSQL's statement_timeout on each connection): the
// measurement reads' own pool, whose reads may be slow and must stay
// bounded (AdaptError answers such a read 503).
func OpenBounded(ctx context.Context, databaseURL string, maxConns int32, statementTimeout time.Duration) (*pgxpool.Pool, error) {
	return open(ctx, databaseURL, maxConns, statementTimeout)
}

func open(ctx context.Context, databaseURL string, maxConns int32, statementTimeout time.Duration) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("open database: parse url: %w", err)
	}
	if statementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(statementTimeout.Milliseconds(), 10)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.PingTimeout == 0 {
		// The liveness ping of an idle connection, before it is handed out,
		// waits no longer than a new connection would.
		cfg.PingTimeout = defaultConnectTimeout
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		encodeUUIDsAsBytes(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database: ping %s: %w", cfg.ConnConfig.Host, err)
	}
	return pool, nil
}
