package measure_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// everything is what every read of the rollups answers for one flag, one
// experiment and the environment's event keys.
type everything struct {
	Stats     []db.ListImpressionStatsRow
	Exposure  measure.Exposure
	Result    measure.ExperimentResult
	EventKeys []db.ListEventKeysRow
	ListTotal int64
	ListOfA   int64
	Status    []measure.FlagStatus
}

func readEverything(t *testing.T, svc *measure.Service, p *auth.Principal, env uuid.UUID) everything {
	t.Helper()
	ctx := context.Background()
	var out everything
	var err error
	if out.Stats, err = svc.ImpressionStats(ctx, p, env); err != nil {
		t.Fatal(err)
	}
	flag, days := "f", int32(90)
	if out.Exposure, err = svc.Exposure(ctx, p, env, &flag, &days); err != nil {
		t.Fatal(err)
	}
	if out.Result, err = svc.ExperimentResults(ctx, p, env, "exp"); err != nil {
		t.Fatal(err)
	}
	if out.EventKeys, err = svc.ListEventKeys(ctx, p, env); err != nil {
		t.Fatal(err)
	}
	page, err := svc.ListImpressions(ctx, p, env, measure.ImpressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out.ListTotal = page.Total
	a := "A"
	if page, err = svc.ListImpressions(ctx, p, env, measure.ImpressionFilter{FlagKey: &flag, Value: &a}); err != nil {
		t.Fatal(err)
	}
	out.ListOfA = page.Total
	if out.Status, err = svc.FlagStatuses(ctx, p, env); err != nil {
		t.Fatal(err)
	}
	return out
}

// Reads never wait on the fold: with rows both folded and not, every read
// answers what it answers once everything is folded, including the cases
// where the unfolded tail changes a rolled-up answer (an earlier first
// exposure arriving late, a tie in time, a later conversion, a user new in
// the tail) — and the read leaves the tail unfolded.
func TestReadsCombineRollupsWithTheUnfoldedTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Hour)
	svc, pool, env := seeded(t, measure.Config{Now: func() time.Time { return now }})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}
	at := func(h int) *time.Time { v := now.Add(time.Duration(h) * time.Hour); return &v }
	user := func(u string) *string { return &u }
	imps := func(rows ...measure.ImpressionInput) {
		t.Helper()
		if err := svc.IngestImpressions(ctx, admin, env, rows); err != nil {
			t.Fatal(err)
		}
	}
	goals := func(rows ...measure.GoalEventInput) {
		t.Helper()
		if err := svc.IngestEvents(ctx, admin, env, rows); err != nil {
			t.Fatal(err)
		}
	}
	// Flags for the status read (the control plane's rows; measurement only reads them).
	if _, err := pool.Exec(ctx, `INSERT INTO flags (environment_id, key) VALUES ($1, 'f'), ($1, 'g'), ($1, 'quiet')`, env); err != nil {
		t.Fatal(err)
	}
	keptExperiment(t, svc, admin, env)

	// Folded: u1 and u2 first see A at -10 h; u2 bought at -12 h, before.
	imps(
		measure.ImpressionInput{FlagKey: "f", UserID: user("u1"), Value: "A", EvaluatedAt: at(-10)},
		measure.ImpressionInput{FlagKey: "f", UserID: user("u2"), Value: "A", EvaluatedAt: at(-10)},
		measure.ImpressionInput{FlagKey: "f", Value: "A", EvaluatedAt: at(-30)},
		measure.ImpressionInput{FlagKey: "g", UserID: user("u1"), Value: "true", EvaluatedAt: at(-5)},
	)
	goals(measure.GoalEventInput{EventKey: "buy", UserID: user("u2"), OccurredAt: at(-12)})
	if err := svc.IngestSummaries(ctx, admin, env, []measure.SummaryInput{{FlagKey: "f", Value: "A", Count: 7, Start: *at(-3), End: *at(-2)}}); err != nil {
		t.Fatal(err)
	}
	foldAll(t, svc, pool)

	// Unfolded tail.
	imps(
		measure.ImpressionInput{FlagKey: "f", UserID: user("u1"), Value: "B", EvaluatedAt: at(-11)}, // earlier: u1's first exposure becomes B
		measure.ImpressionInput{FlagKey: "f", UserID: user("u2"), Value: "B", EvaluatedAt: at(-10)}, // a tie: the folded A stays first
		measure.ImpressionInput{FlagKey: "f", UserID: user("u3"), Value: "A", EvaluatedAt: at(-1)},
		measure.ImpressionInput{FlagKey: "f", UserID: user("u3"), Value: "B", EvaluatedAt: at(-2)}, // u3, new: first B
		measure.ImpressionInput{FlagKey: "f", UserID: user("u3"), Value: "B", EvaluatedAt: at(-40)},
		measure.ImpressionInput{FlagKey: "g", UserID: user("u4"), Value: "false", EvaluatedAt: at(0)},
		measure.ImpressionInput{FlagKey: "f", Value: "B", EvaluatedAt: at(-1)},
	)
	goals(
		measure.GoalEventInput{EventKey: "buy", UserID: user("u2"), OccurredAt: at(-9)}, // u2 converts now
		measure.GoalEventInput{EventKey: "buy", UserID: user("u3"), OccurredAt: at(-1)},
		measure.GoalEventInput{EventKey: "signup", UserID: user("u5"), OccurredAt: at(-1)},
		measure.GoalEventInput{EventKey: "buy", OccurredAt: at(-1)},
	)
	if err := svc.IngestSummaries(ctx, admin, env, []measure.SummaryInput{
		{FlagKey: "f", Value: "B", Count: 3, Start: *at(-2), End: *at(-1)},
		{FlagKey: "h", Value: "x", Count: 2, Start: *at(-2), End: *at(-1)},
	}); err != nil {
		t.Fatal(err)
	}

	before := unfolded(t, pool)
	withTail := readEverything(t, svc, admin, env)
	if after := unfolded(t, pool); after != before || before == 0 {
		t.Fatalf("unfolded rows %d before the reads, %d after: reads must not fold", before, after)
	}
	foldAll(t, svc, pool)
	folded := readEverything(t, svc, admin, env)
	if d := cmp.Diff(folded, withTail, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("reads over the unfolded tail differ from reads once folded (-folded +tail):\n%s", d)
	}

	// And both are right, read from the kept counts.
	r := folded.Result
	if r.Recomputed || withTail.Result.Recomputed {
		t.Error("experiment results were recomputed: their counts were built before the data came")
	}
	arms := map[string][2]int64{}
	for _, v := range r.Variants {
		arms[v.Variant] = [2]int64{v.Exposed, v.Converted}
	}
	if want := map[string][2]int64{"A": {1, 1}, "B": {2, 1}}; !cmp.Equal(arms, want) {
		t.Errorf("experiment arms = %v, want %v (u2: A converted; u1: B; u3: B converted)", arms, want)
	}
	if e := folded.Exposure; e.TotalImpressions != 9+7+3 || e.TotalUsers != 3 {
		t.Errorf("exposure of f: %d evaluations of %d users, want 19 of 3 (9 impressions, 10 summarised)", e.TotalImpressions, e.TotalUsers)
	}
	if len(folded.Status) != 3 || folded.Status[0].Evaluations7d != 19 || folded.Status[1].Evaluations7d != 2 || folded.Status[2].Status != measure.StatusNew {
		t.Errorf("status = %+v", folded.Status)
	}
	if folded.ListTotal != 11 || folded.ListOfA != 4 {
		t.Errorf("list totals %d (all) and %d (f = A), want 11 and 4", folded.ListTotal, folded.ListOfA)
	}
}

// foldAll runs a folder until every raw row is folded.
func foldAll(t testing.TB, svc *measure.Service, pool *pgxpool.Pool) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.RunRollupFolder(ctx, measure.FolderConfig{Interval: time.Millisecond, MaxBacklog: 1})
	}()
	defer func() { stop(); <-done }()
	waitFolded(t, pool)
}
