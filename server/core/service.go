package core

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Service runs Switchyard's business operations against the database.
type Service struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
}

// New returns a Service on pool that logs to logger (discarded when nil).
func New(pool *pgxpool.Pool, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, logger: logger}
}
