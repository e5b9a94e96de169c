package measure_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// userFigures are the statistics that count users, as the reads answer
// them or as a recount from the raw rows finds them.
type userFigures struct {
	FlagUsers  map[string]int64    // stats unique_users, per flag
	TotalUsers int64               // exposure total_users of f
	ValueUsers map[string]int64    // exposure variants' unique_users of f
	Arms       map[string][2]int64 // experiment on f: exposed, converted per first-exposure value
}

func readUserFigures(t *testing.T, svc *measure.Service, p *auth.Principal, env uuid.UUID) userFigures {
	t.Helper()
	ctx := context.Background()
	out := userFigures{FlagUsers: map[string]int64{}, ValueUsers: map[string]int64{}, Arms: map[string][2]int64{}}
	stats, err := svc.ImpressionStats(ctx, p, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stats {
		out.FlagUsers[s.FlagKey] = s.UniqueUsers
	}
	flag, days := "f", int32(90)
	ex, err := svc.Exposure(ctx, p, env, &flag, &days)
	if err != nil {
		t.Fatal(err)
	}
	out.TotalUsers = ex.TotalUsers
	for _, v := range ex.Variants {
		out.ValueUsers[v.Value] = v.UniqueUsers
	}
	res, err := svc.ExperimentResults(ctx, p, env, "exp")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Variants {
		out.Arms[v.Variant] = [2]int64{v.Exposed, v.Converted}
	}
	return out
}

// recountUserFigures computes the same from the raw rows alone, by the
// definitions (docs/reference/measurement.md): distinct identified users;
// a user's first exposure is their earliest impression of the flag, ties
// broken by ingest order (id); they converted when a goal event of the key
// occurred at or after it.
func recountUserFigures(t *testing.T, pool *pgxpool.Pool, env uuid.UUID) userFigures {
	t.Helper()
	ctx := context.Background()
	out := userFigures{FlagUsers: map[string]int64{}, ValueUsers: map[string]int64{}, Arms: map[string][2]int64{}}
	scan := func(sql string, each func(rows pgx.Rows) error) {
		t.Helper()
		rows, err := pool.Query(ctx, sql, env)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	scan(`SELECT flag_key, count(DISTINCT user_id) FROM impressions WHERE environment_id = $1 GROUP BY flag_key`,
		func(rows pgx.Rows) error {
			var k string
			var n int64
			err := rows.Scan(&k, &n)
			out.FlagUsers[k] = n
			return err
		})
	out.TotalUsers = out.FlagUsers["f"]
	scan(`SELECT value, count(DISTINCT user_id) FROM impressions WHERE environment_id = $1 AND flag_key = 'f' GROUP BY value`,
		func(rows pgx.Rows) error {
			var v string
			var n int64
			err := rows.Scan(&v, &n)
			out.ValueUsers[v] = n
			return err
		})
	scan(`SELECT f.value, count(*), count(*) FILTER (WHERE EXISTS (
			SELECT 1 FROM goal_events g WHERE g.environment_id = $1 AND g.event_key = 'buy'
			  AND g.user_id = f.user_id AND g.occurred_at >= f.evaluated_at))
		FROM (SELECT DISTINCT ON (user_id) user_id, value, evaluated_at FROM impressions
		      WHERE environment_id = $1 AND flag_key = 'f' AND user_id IS NOT NULL
		      ORDER BY user_id, evaluated_at, id) f
		GROUP BY f.value`,
		func(rows pgx.Rows) error {
			var v string
			var arm [2]int64
			err := rows.Scan(&v, &arm[0], &arm[1])
			out.Arms[v] = arm
			return err
		})
	return out
}

// The per-user rollup (one row per identified flag, user and value) gives
// every user statistic exactly, whatever the order impressions arrive in
// and however they are split into folds: earlier first exposures arriving
// later, ties of time broken by ingest order within a fold and across
// folds, users seen with several values, anonymous rows, reads over an
// unfolded tail, and retention deleting or moving per-user rows. Each step
// compares the reads with a recount from the raw rows.
func TestPerUserRollupMatchesRecount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	svc, pool, env := seeded(t, measure.Config{Now: func() time.Time { return now }})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}
	keptExperiment(t, svc, admin, env)
	rng := rand.New(rand.NewPCG(25, 18))
	// Times on a coarse grid of 100 days, so that ties of time are common.
	at := func() *time.Time { v := now.Add(-time.Duration(rng.IntN(100*4)) * 6 * time.Hour); return &v }
	check := func(when string) {
		t.Helper()
		checkKeptCounts(t, pool, when)
		want := recountUserFigures(t, pool, env)
		got := readUserFigures(t, svc, admin, env)
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s: reads differ from a recount of the raw rows (-recount +reads):\n%s", when, d)
		}
		checkFirstMarks(t, pool, when)
	}
	for round := range 10 {
		items := make([]measure.ImpressionInput, 60)
		for i := range items {
			it := measure.ImpressionInput{FlagKey: []string{"f", "f", "g"}[rng.IntN(3)], Value: []string{"A", "B", "C"}[rng.IntN(3)], EvaluatedAt: at()}
			if rng.IntN(10) > 0 {
				u := fmt.Sprintf("u%d", rng.IntN(25))
				it.UserID = &u
			}
			items[i] = it
		}
		// Two batches per round: the second often holds a user's earlier
		// impression, and ties with the first.
		for _, b := range [][]measure.ImpressionInput{items[:30], items[30:]} {
			if err := svc.IngestImpressions(ctx, admin, env, b); err != nil {
				t.Fatal(err)
			}
		}
		goals := make([]measure.GoalEventInput, 10)
		for i := range goals {
			u := fmt.Sprintf("u%d", rng.IntN(25))
			goals[i] = measure.GoalEventInput{EventKey: "buy", UserID: &u, OccurredAt: at()}
		}
		if err := svc.IngestEvents(ctx, admin, env, goals); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("round %d, over the unfolded tail", round))
		if round%3 != 1 {
			foldAll(t, svc, pool)
			check(fmt.Sprintf("round %d, folded", round))
		}
	}
	// Retention deletes some per-user rows and moves others.
	res, err := svc.PurgeExpired(ctx, measure.RetentionConfig{Days: 40, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Impressions == 0 || res.UsersRefreshed == 0 {
		t.Fatalf("purge = %+v, want impressions purged and per-user rows refreshed", res)
	}
	check("after retention")
	var stale int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM impression_users WHERE first_at < $1`,
		measure.RetentionCutoff(now, 40)).Scan(&stale); err != nil {
		t.Fatal(err)
	}
	if stale != 0 {
		t.Errorf("%d per-user rows older than the cutoff remain", stale)
	}
	// Rows after the purge fold onto the refreshed rollup.
	u := "u1"
	if err := svc.IngestImpressions(ctx, admin, env, []measure.ImpressionInput{
		{FlagKey: "f", UserID: &u, Value: "C", EvaluatedAt: &now},
		{FlagKey: "f", UserID: &u, Value: "A", EvaluatedAt: at()},
	}); err != nil {
		t.Fatal(err)
	}
	foldAll(t, svc, pool)
	check("after retention, folded again")
}

// Ties of time go to the impression ingested first, in the same fold and
// across folds, and a user seen with two values counts once for the flag
// and once for each value.
func TestPerUserRollupTies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, pool, env := seeded(t, measure.Config{})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}
	keptExperiment(t, svc, admin, env)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	user := func(u string) *string { return &u }
	ingest := func(rows ...measure.ImpressionInput) {
		t.Helper()
		if err := svc.IngestImpressions(ctx, admin, env, rows); err != nil {
			t.Fatal(err)
		}
	}
	// Same fold: u1 sees B then A at the same instant: B, ingested first, is first.
	ingest(
		measure.ImpressionInput{FlagKey: "f", UserID: user("u1"), Value: "B", EvaluatedAt: &t0},
		measure.ImpressionInput{FlagKey: "f", UserID: user("u1"), Value: "A", EvaluatedAt: &t0},
		measure.ImpressionInput{FlagKey: "f", UserID: user("u2"), Value: "A", EvaluatedAt: &t0},
	)
	foldAll(t, svc, pool)
	// Later folds: u2's B at the same instant loses to the folded A; u3's
	// A arrives after their later B, and wins.
	later := t0.Add(time.Minute)
	ingest(measure.ImpressionInput{FlagKey: "f", UserID: user("u3"), Value: "B", EvaluatedAt: &later})
	foldAll(t, svc, pool)
	ingest(
		measure.ImpressionInput{FlagKey: "f", UserID: user("u2"), Value: "B", EvaluatedAt: &t0},
		measure.ImpressionInput{FlagKey: "f", UserID: user("u3"), Value: "A", EvaluatedAt: &t0},
	)
	foldAll(t, svc, pool)
	// A repeat of u2's first impression (same value, same instant, a later
	// id) must not let B, ingested between them, become first.
	ingest(measure.ImpressionInput{FlagKey: "f", UserID: user("u2"), Value: "A", EvaluatedAt: &t0})
	tail := readUserFigures(t, svc, admin, env)
	foldAll(t, svc, pool)
	folded := readUserFigures(t, svc, admin, env)
	want := userFigures{
		FlagUsers: map[string]int64{"f": 3}, TotalUsers: 3,
		ValueUsers: map[string]int64{"A": 3, "B": 3},
		Arms:       map[string][2]int64{"A": {2, 0}, "B": {1, 0}},
	}
	if d := cmp.Diff(want, folded); d != "" {
		t.Errorf("folded (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, tail); d != "" {
		t.Errorf("over the unfolded tail (-want +got):\n%s", d)
	}
	if d := cmp.Diff(recountUserFigures(t, pool, env), folded, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("recount (-recount +reads):\n%s", d)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM impression_users`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 6 {
		t.Errorf("%d per-user rows, want 6: one per (flag, user, value)", rows)
	}
}

// checkFirstMarks checks that each user has exactly one row of a flag
// marked first, their earliest (first_at, first_id).
func checkFirstMarks(t *testing.T, pool *pgxpool.Pool, when string) {
	t.Helper()
	var wrong int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM (
		SELECT u.flag_no, u.user_id FROM impression_users u
		GROUP BY u.flag_no, u.user_id
		HAVING count(*) FILTER (WHERE u.first) <> 1
		    OR min(u.first_at) <> min(u.first_at) FILTER (WHERE u.first)
		    OR min(u.first_id) FILTER (WHERE u.first) > min(u.first_id) FILTER (WHERE u.first_at = (
		        SELECT min(x.first_at) FROM impression_users x WHERE x.flag_no = u.flag_no AND x.user_id = u.user_id))) w`).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("%s: %d users of a flag without exactly one row marked first, their earliest", when, wrong)
	}
}
