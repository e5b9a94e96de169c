package measure_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// BenchmarkFold measures the folder's cost per impression: b.N rows of 3
// flags and 2 values from a population of 20,000 users, half of them seen
// before (folded in a first round), and a goal event per ten impressions,
// folded in the folder's chunks; without experiments, and with one on each
// flag whose counts the fold keeps (experiment_counts.go).
//
//	go test ./server/measure -run '^$' -bench Fold -benchtime 200000x -count 5
func BenchmarkFold(b *testing.B) {
	for _, experiments := range []int{0, 3} {
		b.Run(fmt.Sprintf("experiments=%d", experiments), func(b *testing.B) {
			benchmarkFold(b, experiments)
		})
	}
}

func benchmarkFold(b *testing.B, experiments int) {
	ctx := context.Background()
	svc, pool, env := seeded(b, measure.Config{MaxTail: -1}) // it builds the tail on purpose
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}
	for f := range experiments {
		if _, err := svc.CreateExperiment(ctx, admin, env, measure.ExperimentInput{
			Key: fmt.Sprintf("exp-%d", f), Name: "exp", FlagKey: fmt.Sprintf("flag-%d", f), GoalEventKey: "buy",
		}); err != nil {
			b.Fatal(err)
		}
	}
	buildExperimentCounts(b, svc)
	rng := rand.New(rand.NewPCG(1, 2))
	ingest := func(n int) {
		for done := 0; done < n; done += measure.MaxBatchItems {
			items := make([]measure.ImpressionInput, min(measure.MaxBatchItems, n-done))
			var goals []measure.GoalEventInput
			for i := range items {
				u := fmt.Sprintf("user-%d", rng.IntN(20_000))
				at := time.Now()
				items[i] = measure.ImpressionInput{FlagKey: fmt.Sprintf("flag-%d", rng.IntN(3)), UserID: &u, Value: []string{"true", "false"}[rng.IntN(2)], EvaluatedAt: &at}
				if i%10 == 0 {
					goals = append(goals, measure.GoalEventInput{EventKey: "buy", UserID: &u, OccurredAt: &at})
				}
			}
			if err := svc.IngestImpressions(ctx, sdk, env, items); err != nil {
				b.Fatal(err)
			}
			if err := svc.IngestEvents(ctx, sdk, env, goals); err != nil {
				b.Fatal(err)
			}
		}
	}
	ingest(20_000)
	foldAll(b, svc, pool)
	ingest(b.N)
	b.ResetTimer()
	foldAll(b, svc, pool)
}
