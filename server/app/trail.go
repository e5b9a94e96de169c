package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/worker"
)

// sealInterval is how often the trail is sealed when the worker interval
// is not set: entries are sealed within about this long of their commit.
const sealInterval = time.Second

// sealTrail is the loop that extends the audit trail's hash chain over new
// entries (docs/audit.md, The hash chain). Every instance runs one; one at a
// time seals.
func sealTrail(trail *audit.Trail, pool *pgxpool.Pool, interval time.Duration, logger *slog.Logger) *worker.Loop {
	if interval <= 0 || interval > sealInterval {
		interval = sealInterval
	}
	return worker.New("audit sealer", func(ctx context.Context) (bool, error) {
		_, err := trail.Seal(ctx, pool)
		return false, err
	}, worker.LoopConfig{Interval: interval, Logger: logger})
}

// pruneInterval is how often audit retention runs.
const pruneInterval = time.Hour

// pruneTrail removes audit entries older than days (AUDIT_RETENTION_DAYS)
// every pruneInterval until ctx ends; days 0 keeps them forever.
func pruneTrail(ctx context.Context, trail *audit.Trail, pool *pgxpool.Pool, days int, now func() time.Time, logger *slog.Logger) {
	if days <= 0 {
		return
	}
	if now == nil {
		now = time.Now
	}
	for {
		n, err := trail.Prune(ctx, pool, now().Add(-time.Duration(days)*24*time.Hour))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.WarnContext(ctx, "audit retention failed", "err", err.Error())
		case n > 0:
			logger.InfoContext(ctx, "audit retention", "entries_removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pruneInterval):
		}
	}
}
