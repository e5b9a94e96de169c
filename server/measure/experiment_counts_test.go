package measure_test

import (
	"context"
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
	if _, err := svc.CreateExperiment(ctx, admin, env, measure.ExperimentInput{Key: "exp", Name: "exp", FlagKey: "f", GoalEventKey: "buy"}); err != nil {
		t.Fatal(err)
	}
	buildExperimentCounts(t, svc)
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
