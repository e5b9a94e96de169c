package core_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// Deferred rollups are applied exactly once, whoever folds them: batches
// ingested concurrently, folded by the background folder and by reads at
// the same time, add up to exactly what was ingested.
func TestDeferredRollupsFoldExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.Pool(t)
	svc := core.New(pool, core.Config{})
	if err := svc.Seed(ctx, core.SeedConfig{}); err != nil {
		t.Fatal(err)
	}
	var env uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT id FROM environments WHERE slug = 'production'`).Scan(&env); err != nil {
		t.Fatal(err)
	}
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}

	folderCtx, stopFolder := context.WithCancel(ctx)
	folderDone := make(chan struct{})
	go func() { defer close(folderDone); svc.RunRollupFolder(folderCtx, time.Millisecond) }()

	const writers, batches, size = 4, 10, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				items := make([]core.ImpressionInput, size)
				for i := range items {
					user := fmt.Sprintf("u%d-%d", w, i) // the same users in every batch of a writer
					items[i] = core.ImpressionInput{FlagKey: "f", UserID: &user, Value: "true"}
				}
				if err := svc.IngestImpressions(ctx, admin, env, items); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() { // a reader folding at the same time
			defer wg.Done()
			for b := 0; b < batches; b++ {
				if _, err := svc.ImpressionStats(ctx, admin, env); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stats, err := svc.ImpressionStats(ctx, admin, env)
	stopFolder()
	<-folderDone
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].Total != writers*batches*size || stats[0].TrueCount != writers*batches*size || stats[0].UniqueUsers != writers*size {
		t.Fatalf("stats = %+v, want %d impressions of %d users", stats, writers*batches*size, writers*size)
	}
	var pending int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM rollup_pending`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d batches left unfolded after a read", pending)
	}
}
