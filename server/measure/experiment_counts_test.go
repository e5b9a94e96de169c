package measure_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// armCount is one arm of an experiment metric: exposed and converted users.
type armCount struct {
	Metric, Value int32
	Exposed, Conv int64
}

// checkKeptCounts compares the kept counts of every ready experiment metric
// with a count of the rollups they are kept from, which they equal at every
// commit, whatever the watermarks.
func checkKeptCounts(t testing.TB, pool *pgxpool.Pool, when string) {
	t.Helper()
	read := func(query string) []armCount {
		t.Helper()
		rows, err := pool.Query(context.Background(), query)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[armCount])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := read(`SELECT m.metric_no, u.value_no, count(*), count(*) FILTER (WHERE g.last_at >= u.first_at)
		FROM experiment_metrics m
		JOIN measure_flags f ON f.environment_id = m.environment_id AND f.flag_key = m.flag_key
		JOIN impression_users u ON u.flag_no = f.flag_no AND u.first
		LEFT JOIN goal_event_users g ON g.environment_id = m.environment_id AND g.event_key = m.event_key AND g.user_id = u.user_id
		WHERE m.ready
		GROUP BY 1, 2 ORDER BY 1, 2`)
	got := read(`SELECT c.metric_no, c.value_no, c.exposed, c.converted
		FROM experiment_arm_counts c JOIN experiment_metrics m USING (metric_no)
		WHERE m.ready AND (c.exposed <> 0 OR c.converted <> 0)
		ORDER BY 1, 2`)
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s: kept experiment counts (-count of the rollups +kept):\n%s", when, d)
	}
}

// Retention that deletes a user's latest goal event takes the conversion it
// made out of the counts. In a purge the user's first exposure has moved
// past the cutoff first, so this is for a first exposure folded in between:
// the statement is run alone here.
func TestExpiredGoalEventsLeaveTheKeptCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	svc, pool, env := seeded(t, measure.Config{Now: func() time.Time { return now }})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}
	keptExperiment(t, svc, admin, env)
	day := func(n int) *time.Time { v := now.AddDate(0, 0, n); return &v }
	user := func(u string) *string { return &u }
	if err := svc.IngestImpressions(ctx, admin, env, []measure.ImpressionInput{
		{FlagKey: "f", UserID: user("old"), Value: "A", EvaluatedAt: day(-100)},
		{FlagKey: "f", UserID: user("new"), Value: "A", EvaluatedAt: day(-10)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := svc.IngestEvents(ctx, admin, env, []measure.GoalEventInput{
		{EventKey: "buy", UserID: user("old"), OccurredAt: day(-95)},
		{EventKey: "buy", UserID: user("new"), OccurredAt: day(-5)},
	}); err != nil {
		t.Fatal(err)
	}
	foldAll(t, svc, pool)
	arms := func() [2]int64 {
		t.Helper()
		res, err := svc.ExperimentResults(ctx, admin, env, "exp")
		if err != nil || len(res.Variants) != 1 || res.Recomputed {
			t.Fatalf("results = %+v, %v; want one arm, from the kept counts", res, err)
		}
		return [2]int64{res.Variants[0].Exposed, res.Variants[0].Converted}
	}
	if got := arms(); got != [2]int64{2, 2} {
		t.Fatalf("before retention: arm A %v, want 2 exposed, 2 converted", got)
	}
	n, err := db.New(pool).DeleteExpiredGoalEventUsers(ctx, db.DeleteExpiredGoalEventUsersParams{Cutoff: *day(-90), BatchSize: 10})
	if err != nil || n != 1 {
		t.Fatalf("deleted %d goal event users (%v), want 1", n, err)
	}
	if got := arms(); got != [2]int64{2, 1} {
		t.Errorf("after the old user's goal expired: arm A %v, want 2 exposed, 1 converted", got)
	}
	checkKeptCounts(t, pool, "after the goal expired")
}

// explaining runs every query it is given twice: once under EXPLAIN
// ANALYZE, keeping the plan, then as itself.
type explaining struct {
	db.DBTX
	plans []string
}

func (e *explaining) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	var plan string
	if err := e.DBTX.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
		return nil, err
	}
	e.plans = append(e.plans, plan)
	return e.DBTX.Query(ctx, sql, args...)
}

// planNode is a node of a JSON plan, with what it read.
type planNode struct {
	NodeType        string     `json:"Node Type"`
	Relation        string     `json:"Relation Name"`
	Rows            float64    `json:"Actual Rows"`
	Loops           float64    `json:"Actual Loops"`
	RemovedByFilter float64    `json:"Rows Removed by Filter"`
	Plans           []planNode `json:"Plans"`
}

// read adds up the rows each relation's scans returned or filtered out.
func (n planNode) read(into map[string]float64) {
	if n.Relation != "" {
		into[n.Relation] += (n.Rows + n.RemovedByFilter) * n.Loops
	}
	for _, c := range n.Plans {
		c.read(into)
	}
}

// With no planner statistics at all, as after a bulk load that no ANALYZE
// followed, and with fresh ones, the results read costs the unfolded tail,
// not the experiment: it reads the raw rows past the watermarks and, for each user
// the tail moves, one row of each rollup, however many users they hold.
func TestResultsReadWithoutStatisticsCostsTheTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, pool, env := seeded(t, measure.Config{})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}
	keptExperiment(t, svc, admin, env)
	now := time.Now().UTC()
	// 6,000 users exposed and a fifth of them converted, folded; then a
	// tail of 100 impressions of the flag (50 users new, 50 seen later
	// than before), 100 of another flag and 40 goal events.
	if _, err := pool.Exec(ctx, `
		INSERT INTO impressions (environment_id, flag_key, user_id, value, evaluated_at)
		SELECT $1, 'f', 'u' || g, (ARRAY['A', 'B'])[1 + g % 2], $2::timestamptz - interval '1 day' FROM generate_series(1, 6000) g`, env, now); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO goal_events (environment_id, event_key, user_id, occurred_at, received_at)
		SELECT $1, 'buy', 'u' || g, $2::timestamptz - interval '1 hour', $2 FROM generate_series(1, 6000, 5) g`, env, now); err != nil {
		t.Fatal(err)
	}
	foldAll(t, svc, pool)
	if _, err := pool.Exec(ctx, `
		INSERT INTO impressions (environment_id, flag_key, user_id, value, evaluated_at)
		SELECT $1, CASE WHEN g <= 100 THEN 'f' ELSE 'g' END, 'u' || (5950 + g), 'B', $2 FROM generate_series(1, 200) g;
		`, env, now); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO goal_events (environment_id, event_key, user_id, occurred_at, received_at)
		SELECT $1, 'buy', 'u' || (5980 + g), $2, $2 FROM generate_series(1, 40) g`, env, now); err != nil {
		t.Fatal(err)
	}
	tables := []string{"impressions", "goal_events", "impression_users", "goal_event_users", "measure_flags", "measure_values", "experiment_metrics", "experiment_arm_counts"}
	if _, err := pool.Exec(ctx, `DELETE FROM pg_statistic WHERE starelid = ANY ($1::regclass[])`, tables); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE pg_class SET reltuples = -1 WHERE oid = ANY ($1::regclass[])`, tables); err != nil {
		t.Fatal(err)
	}
	q := db.New(pool)
	marks, err := q.GetRollupWatermarks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check := func(state string) {
		t.Helper()
		ex := &explaining{DBTX: pool}
		arms, err := db.New(ex).ListExperimentArmCounts(ctx, db.ListExperimentArmCountsParams{
			EnvironmentID: env, FlagKey: "f", GoalEventKey: "buy", ImpressionsAfter: marks.Impressions, EventsAfter: marks.Events,
		})
		if err != nil {
			t.Fatal(err)
		}
		want, err := q.ListExperimentArms(ctx, db.ListExperimentArmsParams{
			EnvironmentID: env, FlagKey: "f", GoalEventKey: "buy", ImpressionsAfter: marks.Impressions, EventsAfter: marks.Events,
		})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]db.ListExperimentArmsRow, len(arms))
		for i, a := range arms {
			got[i] = db.ListExperimentArmsRow(a)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: kept counts and the tail (-computed from every user +kept):\n%s", state, d)
		}
		var plan []struct{ Plan planNode }
		if err := json.Unmarshal([]byte(ex.plans[0]), &plan); err != nil {
			t.Fatal(err)
		}
		read := map[string]float64{}
		plan[0].Plan.read(read)
		// The tail: 200 impressions past the watermark (100 of them the
		// flag's) and 40 goal events, each table's largest id besides;
		// its users are 50 new ones, 50 seen before, and 40 with a goal,
		// 20 of them among the former.
		for table, most := range map[string]float64{"impressions": 201, "goal_events": 41, "impression_users": 120, "goal_event_users": 120} {
			if read[table] > most {
				t.Errorf("%s: the read went through %.0f rows of %s, want at most %.0f (the tail's); plan:\n%s", state, read[table], table, most, ex.plans[0])
			}
		}
	}
	check("without statistics")
	if _, err := pool.Exec(ctx, "ANALYZE "+strings.Join(tables, ", ")); err != nil {
		t.Fatal(err)
	}
	check("with fresh statistics")
}
