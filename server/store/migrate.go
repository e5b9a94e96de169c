package store

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/switchyard/switchyard/migrations"
)

// Migrate applies every pending migration of package migrations and logs each
// one applied. It is safe to call from several instances at once: a
// PostgreSQL session advisory lock serialises them, and the later ones find
// nothing pending. Without pending migrations it changes nothing.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	provider, closeDB, err := newProvider(pool)
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	defer closeDB()
	results, err := provider.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	for _, r := range results {
		logger.InfoContext(ctx, "migration applied",
			"version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	version, err := provider.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate database: read version: %w", err)
	}
	logger.InfoContext(ctx, "database schema up to date", "version", version, "applied", len(results))
	return nil
}

// newProvider returns a goose provider over pool and the function that
// releases its *sql.DB (closing it leaves the pool open).
func newProvider(pool *pgxpool.Pool) (*goose.Provider, func(), error) {
	// Poll for the lock every second (goose's default is every 5 s) for up to
	// 5 minutes, so an instance waiting behind another one starts promptly.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, nil, fmt.Errorf("create migration lock: %w", err)
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS,
		goose.WithSessionLocker(locker))
	if err != nil {
		_ = sqlDB.Close()
		return nil, nil, fmt.Errorf("create migration provider: %w", err)
	}
	return provider, func() { _ = sqlDB.Close() }, nil
}
