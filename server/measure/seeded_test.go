package measure_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/measure"
)

// seeded returns a measurement service on a fresh database holding the
// first-boot seed (written by identity, as at start-up), and the id of its
// Production environment.
func seeded(t testing.TB, cfg measure.Config) (*measure.Service, *pgxpool.Pool, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	pool := testenv.Pool(t)
	if err := identity.New(pool, identity.Config{}).Seed(ctx, identity.SeedConfig{}); err != nil {
		t.Fatal(err)
	}
	var env uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT id FROM environments WHERE slug = 'production'`).Scan(&env); err != nil {
		t.Fatal(err)
	}
	return measure.New(pool, cfg), pool, env
}

// buildExperimentCounts builds the kept counts of every new experiment
// metric, as the server's builder does, so that results are read from them.
func buildExperimentCounts(t testing.TB, svc *measure.Service) {
	t.Helper()
	for {
		built, err := svc.BuildExperimentCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !built {
			return
		}
	}
}

// keptExperiment creates experiment "exp" over flag "f" with goal event key
// "buy" and builds its counts, so that its results are read from them.
func keptExperiment(t testing.TB, svc *measure.Service, p *auth.Principal, env uuid.UUID) {
	t.Helper()
	if _, err := svc.CreateExperiment(context.Background(), p, env, measure.ExperimentInput{Key: "exp", Name: "exp", FlagKey: "f", GoalEventKey: "buy"}); err != nil {
		t.Fatal(err)
	}
	buildExperimentCounts(t, svc)
}
