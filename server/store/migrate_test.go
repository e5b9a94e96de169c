package store_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/store"
)

// wantTables is every table of the data model, in alphabetical order.
var wantTables = []string{
	"audit_entries", "audit_trail", "audit_trail_anchor", "audit_trail_hashes", "audit_trail_head", "change_log", "change_requests", "chat_deliveries", "chat_integrations",
	"environments", "evaluation_hours", "experiment_arm_counts", "experiment_metrics", "experiments", "flags", "goal_event_keys", "goal_event_users", "goal_events",
	"impression_daily", "impression_summaries", "impression_users", "impressions",
	"login_attempts", "measure_flags", "measure_values", "notification_outbox", "personal_access_tokens", "project_members", "projects",
	"release_arm_metrics", "release_checks", "release_user_metrics", "release_users", "releases", "rollup_watermarks",
	"scheduled_changes", "scim_group_members", "scim_groups", "scim_tokens", "scim_users",
	"sdk_keys", "segments", "sessions", "sso_used_states", "users",
	"webhook_deliveries", "webhooks", "workspace", "workspace_sso",
}

// emptyPool opens a pool on a fresh database without any schema.
func emptyPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := store.Open(t.Context(), testenv.EmptyDatabaseURL(t), 4)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// tables lists the tables of the public schema except goose's own.
func tables(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_name <> 'goose_db_version' ORDER BY table_name`)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatalf("scan table name: %v", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("list tables: %v", err)
	}
	return names
}

// appliedVersions returns the migration versions goose recorded, in order.
func appliedVersions(t *testing.T, pool *pgxpool.Pool) []int64 {
	t.Helper()
	rows, err := pool.Query(t.Context(), "SELECT version_id FROM goose_db_version WHERE is_applied ORDER BY id")
	if err != nil {
		t.Fatalf("read goose_db_version: %v", err)
	}
	var vs []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("scan version: %v", err)
		}
		vs = append(vs, v)
	}
	return vs
}

// countingHandler counts log records by message.
type countingHandler struct {
	mu     sync.Mutex
	counts map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Message]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[msg]
}

func TestMigrateFromEmptyThenNoop(t *testing.T) {
	t.Parallel()
	pool := emptyPool(t)
	h := &countingHandler{counts: map[string]int{}}
	logger := slog.New(h)

	if err := store.Migrate(t.Context(), pool, logger); err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	if diff := cmp.Diff(wantTables, tables(t, pool)); diff != "" {
		t.Errorf("tables after migrate (-want +got):\n%s", diff)
	}
	applied := h.count("migration applied")
	if applied == 0 {
		t.Errorf("first Migrate logged no applied migration")
	}
	versions := appliedVersions(t, pool)

	if err := store.Migrate(t.Context(), pool, logger); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if got := h.count("migration applied"); got != applied {
		t.Errorf("second Migrate applied %d more migrations, want 0", got-applied)
	}
	if diff := cmp.Diff(versions, appliedVersions(t, pool)); diff != "" {
		t.Errorf("second Migrate changed goose_db_version (-before +after):\n%s", diff)
	}
}

// TestMigrateConcurrent starts two "instances" (two pools) on one fresh
// database at once; both must succeed and every migration must apply once.
func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	url := testenv.EmptyDatabaseURL(t)
	pools := make([]*pgxpool.Pool, 2)
	for i := range pools {
		p, err := store.Open(t.Context(), url, 4)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(p.Close)
		pools[i] = p
	}
	errs := make([]error, len(pools))
	var wg sync.WaitGroup
	for i, p := range pools {
		wg.Go(func() { errs[i] = store.Migrate(t.Context(), p, slog.New(slog.DiscardHandler)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate on instance %d: %v", i, err)
		}
	}
	versions := appliedVersions(t, pools[0])
	if !slices.IsSorted(versions) || len(slices.Compact(slices.Clone(versions))) != len(versions) {
		t.Errorf("goose_db_version holds %v, want each version once", versions)
	}
	if diff := cmp.Diff(wantTables, tables(t, pools[0])); diff != "" {
		t.Errorf("tables after concurrent migrate (-want +got):\n%s", diff)
	}
}

func TestMigrateDownToZeroAndUpAgain(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := emptyPool(t)
	if err := store.Migrate(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	provider, closeDB, err := store.NewProvider(pool)
	if err != nil {
		t.Fatalf("NewProvider: %v", err)
	}
	defer closeDB()
	if _, err := provider.DownTo(ctx, 0); err != nil {
		t.Fatalf("DownTo(0): %v", err)
	}
	if got := tables(t, pool); len(got) != 0 {
		t.Errorf("tables left after down to 0: %v", got)
	}
	var functions int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'public'`).Scan(&functions); err != nil {
		t.Fatalf("count functions: %v", err)
	}
	if functions != 0 {
		t.Errorf("%d functions left after down to 0", functions)
	}
	if err := store.Migrate(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("Migrate after down: %v", err)
	}
	if diff := cmp.Diff(wantTables, tables(t, pool)); diff != "" {
		t.Errorf("tables after up again (-want +got):\n%s", diff)
	}
}
