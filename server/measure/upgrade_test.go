package measure_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/switchyard/switchyard/migrations"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/measure"
	"github.com/switchyard/switchyard/server/store"
)

// rebuildV16Rollups fills the per-user rollups of schema version 16 from the
// raw rows with ids up to the given one, as that version's fold left them: a first
// exposure per (flag, user) (earliest, ties by id), the first time of each
// (flag, value, user), and their counters.
const rebuildV16Rollups = `
INSERT INTO impression_exposures (environment_id, flag_key, user_id, value, first_at)
SELECT DISTINCT ON (environment_id, flag_key, user_id) environment_id, flag_key, user_id, value, evaluated_at
FROM impressions WHERE user_id IS NOT NULL AND id <= %[1]d
ORDER BY environment_id, flag_key, user_id, evaluated_at, id;
INSERT INTO impression_variant_users (environment_id, flag_key, value, user_id, first_at)
SELECT environment_id, flag_key, value, user_id, min(evaluated_at)
FROM impressions WHERE user_id IS NOT NULL AND id <= %[1]d
GROUP BY 1, 2, 3, 4;
INSERT INTO impression_flag_users (environment_id, flag_key, users)
SELECT environment_id, flag_key, count(*) FROM impression_exposures GROUP BY 1, 2;
INSERT INTO impression_value_users (environment_id, flag_key, value, users)
SELECT environment_id, flag_key, value, count(*) FROM impression_variant_users GROUP BY 1, 2, 3;
INSERT INTO impression_daily (environment_id, flag_key, day, value, impressions, last_seen)
SELECT environment_id, flag_key, (evaluated_at AT TIME ZONE 'UTC')::date, value, count(*), max(evaluated_at)
FROM impressions WHERE id <= %[1]d GROUP BY 1, 2, 3, 4;
UPDATE rollup_watermarks SET folded_through = %[1]d WHERE kind = 'impressions';
`

// Migration 00018 replaces the two per-user rollups with impression_users:
// every user statistic read after the upgrade equals a recount of the raw
// rows (which the old rollups held exactly), ties of time between a user's
// values included, with rows still unfolded at the upgrade folded after it.
func TestUpgradeToImpressionUsersKeepsStatistics(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := store.Open(ctx, testenv.EmptyDatabaseURL(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	sqlDB := stdlib.OpenDBFromPool(pool)
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provider.UpTo(ctx, 16); err != nil {
		t.Fatal(err)
	}
	_ = sqlDB.Close()
	env := uuid.MustParse("22222222-2222-4222-8222-222222222222")
	if _, err := pool.Exec(ctx, `
		INSERT INTO projects (id, name, slug) VALUES ('11111111-1111-4111-8111-111111111111', 'Web', 'web');
		INSERT INTO environments (id, project_id, name, slug, is_default)
		  VALUES ('22222222-2222-4222-8222-222222222222', '11111111-1111-4111-8111-111111111111', 'Prod', 'prod', true);
		INSERT INTO experiments (environment_id, key, name, flag_key, goal_event_key)
		  VALUES ('22222222-2222-4222-8222-222222222222', 'exp', 'exp', 'f', 'buy');`); err != nil {
		t.Fatalf("seed at version 16: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Hour)
	rng := rand.New(rand.NewPCG(18, 16))
	insert := func(n int) {
		t.Helper()
		for range n {
			var user *string
			if rng.IntN(8) > 0 {
				u := fmt.Sprintf("u%d", rng.IntN(30))
				user = &u
			}
			at := now.Add(-time.Duration(rng.IntN(40)) * time.Hour) // coarse: many ties
			if _, err := pool.Exec(ctx, `INSERT INTO impressions (environment_id, flag_key, user_id, value, evaluated_at) VALUES ($1, $2, $3, $4, $5)`,
				env, []string{"f", "f", "g"}[rng.IntN(3)], user, []string{"A", "B", "C"}[rng.IntN(3)], at); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(4) == 0 && user != nil {
				if _, err := pool.Exec(ctx, `INSERT INTO goal_events (environment_id, event_key, user_id, occurred_at) VALUES ($1, 'buy', $2, $3)`,
					env, user, at.Add(time.Duration(rng.IntN(5)-2)*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	insert(300)
	var folded int64
	if err := pool.QueryRow(ctx, `SELECT max(id) FROM impressions`).Scan(&folded); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf(rebuildV16Rollups, folded)); err != nil {
		t.Fatalf("old rollups: %v", err)
	}
	insert(40) // unfolded at the upgrade

	if err := store.Migrate(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate to the latest version: %v", err)
	}
	svc := measure.New(pool, measure.Config{})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}
	compare := func(when string) {
		t.Helper()
		if d := cmp.Diff(recountUserFigures(t, pool, env), readUserFigures(t, svc, admin, env), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s (-recount +reads):\n%s", when, d)
		}
	}
	compare("after the upgrade, with an unfolded tail")
	checkFirstMarks(t, pool, "after the upgrade")
	// Migration 00023 leaves the experiment's counts to the builder: until
	// it runs, results are computed from every user, and say so.
	source := func(want bool) {
		t.Helper()
		res, err := svc.ExperimentResults(ctx, admin, env, "exp")
		if err != nil || res.Recomputed != want {
			t.Fatalf("results recomputed = %v (%v), want %v", res.Recomputed, err, want)
		}
	}
	source(true)
	if built, err := svc.BuildExperimentCounts(ctx); err != nil || !built {
		t.Fatalf("build experiment counts = %v, %v", built, err)
	}
	if built, err := svc.BuildExperimentCounts(ctx); err != nil || built {
		t.Fatalf("build experiment counts again = %v, %v; want nothing left to build", built, err)
	}
	source(false)
	compare("after the upgrade, counts built, with an unfolded tail")
	var rows, triples int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM impression_users),
		(SELECT count(*) FROM (SELECT DISTINCT flag_key, user_id, value FROM impressions WHERE user_id IS NOT NULL AND id <= $1) x)`,
		folded).Scan(&rows, &triples); err != nil {
		t.Fatal(err)
	}
	if rows != triples {
		t.Errorf("impression_users holds %d rows, want %d: one per folded (flag, user, value)", rows, triples)
	}
	foldEverything(t, svc, pool)
	compare("after the upgrade, folded")
	insert(60)
	foldEverything(t, svc, pool)
	compare("after the upgrade, more rows folded")
	checkFirstMarks(t, pool, "after the upgrade, more rows folded")
	source(false)
}

// foldEverything runs a folder until every raw row is folded.
func foldEverything(t *testing.T, svc *measure.Service, pool *pgxpool.Pool) {
	t.Helper()
	foldAll(t, svc, pool)
	var left int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM impressions
		WHERE id > (SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions')`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d rows unfolded (%v)", left, err)
	}
}
