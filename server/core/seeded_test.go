package core_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// seeded returns a service on a fresh database holding the first-boot seed,
// and the id of its Production environment.
func seeded(t *testing.T, cfg core.Config) (*core.Service, *pgxpool.Pool, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	pool := testenv.Pool(t)
	svc := core.New(pool, cfg)
	if err := identity.New(pool, identity.Config{}).Seed(ctx, identity.SeedConfig{}); err != nil {
		t.Fatal(err)
	}
	var env uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT id FROM environments WHERE slug = 'production'`).Scan(&env); err != nil {
		t.Fatal(err)
	}
	return svc, pool, env
}
