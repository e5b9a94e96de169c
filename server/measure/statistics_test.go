package measure_test

import (
	"slices"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/measure"
)

// A measurement table loaded without ANALYZE (autovacuum off, or behind)
// gets fresh planner statistics at the next refresh, and only once: a
// table that did not grow is left alone.
func TestRefreshStatisticsAnalyzesGrownTables(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	ctx := t.Context()
	svc := measure.New(pool, measure.Config{})
	if _, err := svc.RefreshStatistics(ctx); err != nil { // whatever the fresh database holds
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO measure_values (flag_no, value) SELECT g % 50, 'v' || g FROM generate_series(1, 5000) g`); err != nil {
		t.Fatal(err)
	}
	// Table activity reaches pg_stat_user_tables once the writing backend
	// flushes its counters, within about a second.
	var analyzed []string
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(analyzed, "measure_values"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("measure_values, 5,000 rows newer than its statistics, was not analyzed (last: %v)", analyzed)
		}
		var err error
		if analyzed, err = svc.RefreshStatistics(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var rows float64
	if err := pool.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE relname = 'measure_values'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 5000 {
		t.Errorf("after the refresh the planner counts %v rows in measure_values, want 5000", rows)
	}
	again, err := svc.RefreshStatistics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(again, "measure_values") {
		t.Errorf("measure_values analyzed again without growing: %v", again)
	}
}
