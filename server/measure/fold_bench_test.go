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
// before (folded in a first round), folded in the folder's chunks.
//
//	go test ./server/measure -run '^$' -bench Fold -benchtime 200000x
func BenchmarkFold(b *testing.B) {
	ctx := context.Background()
	svc, pool, env := seeded(b, measure.Config{MaxTail: -1}) // it builds the tail on purpose
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}
	rng := rand.New(rand.NewPCG(1, 2))
	ingest := func(n int) {
		for done := 0; done < n; done += measure.MaxBatchItems {
			items := make([]measure.ImpressionInput, min(measure.MaxBatchItems, n-done))
			for i := range items {
				u := fmt.Sprintf("user-%d", rng.IntN(20_000))
				at := time.Now()
				items[i] = measure.ImpressionInput{FlagKey: fmt.Sprintf("flag-%d", rng.IntN(3)), UserID: &u, Value: []string{"true", "false"}[rng.IntN(2)], EvaluatedAt: &at}
			}
			if err := svc.IngestImpressions(ctx, sdk, env, items); err != nil {
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
