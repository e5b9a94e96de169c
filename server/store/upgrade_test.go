package store_test

import (
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/store"
)

// Existing data survives every later migration (docs/reference/server.md,
// Start-up), and what later migrations add works on rows written before
// them: a database at the first version, with a project, an environment and
// a flag in it, is migrated to the latest version.
func TestUpgradeKeepsData(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := poolAtVersion(t, 1)
	if _, err := pool.Exec(ctx, `
		INSERT INTO workspace (id, name) VALUES (1, 'Acme');
		INSERT INTO projects (id, name, slug) VALUES ('11111111-1111-4111-8111-111111111111', 'Web', 'web');
		INSERT INTO environments (id, project_id, name, slug, is_default)
		  VALUES ('22222222-2222-4222-8222-222222222222', '11111111-1111-4111-8111-111111111111', 'Prod', 'prod', true);
		INSERT INTO flags (environment_id, key, is_enabled, rollout_percentage, rules)
		  VALUES ('22222222-2222-4222-8222-222222222222', 'checkout', true, 25,
		          '[{"attribute":"plan","operator":"equals","values":["pro"]}]');
		INSERT INTO impressions (environment_id, flag_key, user_id, value, evaluated_at)
		  VALUES ('22222222-2222-4222-8222-222222222222', 'checkout', 'u1', 'true', now());`); err != nil {
		t.Fatalf("seed at version 1: %v", err)
	}
	if err := store.Migrate(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate to the latest version: %v", err)
	}
	var name string
	var pct int
	var rules string
	var impressions int
	if err := pool.QueryRow(ctx, `SELECT w.name, f.rollout_percentage, f.rules::text,
		(SELECT count(*) FROM impressions) FROM workspace w, flags f WHERE f.key = 'checkout'`).Scan(&name, &pct, &rules, &impressions); err != nil {
		t.Fatalf("read after the upgrade: %v", err)
	}
	if name != "Acme" || pct != 25 || rules != `[{"values": ["pro"], "operator": "equals", "attribute": "plan"}]` || impressions != 1 {
		t.Errorf("after the upgrade: workspace %q, rollout %d, rules %s, %d impressions", name, pct, rules, impressions)
	}
	// The change log (a later migration) records changes to a flag written before it.
	if _, err := pool.Exec(ctx, `UPDATE flags SET version = version + 1 WHERE key = 'checkout'`); err != nil {
		t.Fatal(err)
	}
	var logged int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM change_log WHERE key = 'checkout' AND version = 2`).Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if logged != 1 {
		t.Errorf("change log entries for the old flag's update = %d, want 1", logged)
	}
}

// Migration 00012 starts the per-value user counters from the distinct users
// already folded.
func TestUpgradeCountsValueUsers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := poolAtVersion(t, 11)
	if _, err := pool.Exec(ctx, `
		INSERT INTO projects (id, name, slug) VALUES ('11111111-1111-4111-8111-111111111111', 'Web', 'web');
		INSERT INTO environments (id, project_id, name, slug, is_default)
		  VALUES ('22222222-2222-4222-8222-222222222222', '11111111-1111-4111-8111-111111111111', 'Prod', 'prod', true);
		INSERT INTO impression_variant_users (environment_id, flag_key, value, user_id, first_at) VALUES
		  ('22222222-2222-4222-8222-222222222222', 'checkout', 'true', 'u1', now()),
		  ('22222222-2222-4222-8222-222222222222', 'checkout', 'true', 'u2', now()),
		  ('22222222-2222-4222-8222-222222222222', 'checkout', 'false', 'u1', now()),
		  ('33333333-3333-4333-8333-333333333333', 'checkout', 'true', 'u9', now());`); err != nil {
		t.Fatalf("seed at version 11: %v", err)
	}
	// Migration 00018 moves the counters (server/measure's upgrade test).
	migrateTo(t, pool, 12)
	rows, err := pool.Query(ctx, `SELECT value || '=' || users FROM impression_value_users ORDER BY value`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	// The row of an environment that no longer exists is not counted.
	if diff := cmp.Diff([]string{"false=1", "true=2"}, got); diff != "" {
		t.Errorf("value user counters (-want +got):\n%s", diff)
	}
}

// poolAtVersion opens a pool on a fresh database migrated up to version.
func poolAtVersion(t *testing.T, version int64) *pgxpool.Pool {
	t.Helper()
	pool := emptyPool(t)
	migrateTo(t, pool, version)
	return pool
}

// migrateTo migrates pool's database up to version.
func migrateTo(t *testing.T, pool *pgxpool.Pool, version int64) {
	t.Helper()
	provider, closeDB, err := store.NewProvider(pool)
	if err != nil {
		t.Fatalf("NewProvider: %v", err)
	}
	defer closeDB()
	if _, err := provider.UpTo(t.Context(), version); err != nil {
		t.Fatalf("UpTo(%d): %v", version, err)
	}
}
