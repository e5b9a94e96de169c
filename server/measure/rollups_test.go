package measure_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/measure"
)

// Rows are folded into the rollups exactly once, whoever folds them:
// batches ingested concurrently, folded by the background folder and by
// reads at the same time, add up to exactly what was ingested, and every
// read sees at least the batches acknowledged before it.
func TestDeferredRollupsFoldExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, pool, env := seeded(t, measure.Config{})
	admin := &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "ops@example.com", Role: auth.RoleAdmin}

	folderCtx, stopFolder := context.WithCancel(ctx)
	folderDone := make(chan struct{})
	go func() {
		defer close(folderDone)
		svc.RunRollupFolder(folderCtx, measure.FolderConfig{Interval: time.Millisecond, MaxBacklog: 1})
	}()

	const writers, batches, size = 4, 10, 50
	var acked atomic.Int64 // impressions acknowledged so far
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				items := make([]measure.ImpressionInput, size)
				for i := range items {
					user := fmt.Sprintf("u%d-%d", w, i) // the same users in every batch of a writer
					items[i] = measure.ImpressionInput{FlagKey: "f", UserID: &user, Value: "true"}
				}
				if err := svc.IngestImpressions(ctx, admin, env, items); err != nil {
					t.Error(err)
					return
				}
				acked.Add(size)
			}
		}()
		go func() { // a reader folding at the same time
			defer wg.Done()
			for b := 0; b < batches; b++ {
				want := acked.Load()
				stats, err := svc.ImpressionStats(ctx, admin, env)
				if err != nil {
					t.Error(err)
					return
				}
				var got int64
				for _, st := range stats {
					got += st.Total
				}
				if got < want {
					t.Errorf("a read saw %d impressions after %d were acknowledged", got, want)
				}
			}
		}()
	}
	wg.Wait()
	check := func(when string) {
		t.Helper()
		stats, err := svc.ImpressionStats(ctx, admin, env)
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 1 || stats[0].Total != writers*batches*size || stats[0].TrueCount != writers*batches*size || stats[0].UniqueUsers != writers*size {
			t.Fatalf("%s: stats = %+v, want %d impressions of %d users", when, stats, writers*batches*size, writers*size)
		}
	}
	check("as ingest ends")
	waitFolded(t, pool)
	stopFolder()
	<-folderDone
	check("once everything is folded")
}

// waitFolded waits until a running folder has folded every raw row.
func waitFolded(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if unfolded(t, pool) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows left unfolded after 20 s", unfolded(t, pool))
		}
		time.Sleep(5 * time.Millisecond) // polling for the folder, with a deadline
	}
}

// unfolded counts the raw rows of every kind after their watermark.
func unfolded(t testing.TB, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM impressions WHERE id > (SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions'))
		+ (SELECT count(*) FROM impression_summaries WHERE id > (SELECT folded_through FROM rollup_watermarks WHERE kind = 'summaries'))
		+ (SELECT count(*) FROM goal_events WHERE id > (SELECT folded_through FROM rollup_watermarks WHERE kind = 'events'))`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The background folder folds once ingest pauses, without any read.
func TestRollupFolderFoldsWhenIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, pool, env := seeded(t, measure.Config{})
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}
	user := "u1"
	if err := svc.IngestImpressions(ctx, sdk, env, []measure.ImpressionInput{{FlagKey: "f", UserID: &user, Value: "true"}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.IngestEvents(ctx, sdk, env, []measure.GoalEventInput{{EventKey: "buy", UserID: &user}}); err != nil {
		t.Fatal(err)
	}

	// A backlog bound far above one row: only idleness can start the fold.
	folderCtx, stopFolder := context.WithCancel(ctx)
	folderDone := make(chan struct{})
	go func() {
		defer close(folderDone)
		svc.RunRollupFolder(folderCtx, measure.FolderConfig{Interval: 5 * time.Millisecond, MaxBacklog: 1 << 40})
	}()
	defer func() { stopFolder(); <-folderDone }()
	const folded = `SELECT (SELECT count(*) FROM impression_daily) + (SELECT count(*) FROM goal_event_keys)`
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := pool.QueryRow(ctx, folded).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rollup rows = %d after 10 s, want 2 (one per kind)", n)
		}
		time.Sleep(5 * time.Millisecond) // polling for the folder, with a deadline
	}
}

// An SDK key's environment is not read back at ingest (the key lookup
// found it); an environment gone since answers 404, not 500, through the
// raw rows' foreign key.
func TestIngestIntoMissingEnvironment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := measure.New(testenv.Pool(t), measure.Config{})
	gone := uuid.New()
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: gone}
	err := svc.IngestImpressions(ctx, sdk, gone, []measure.ImpressionInput{{FlagKey: "f", Value: "true"}})
	if apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("impressions: err = %v, want NotFound", err)
	}
	err = svc.IngestEvents(ctx, sdk, gone, []measure.GoalEventInput{{EventKey: "buy"}})
	if apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("goal events: err = %v, want NotFound", err)
	}
}

// The raw tables have no foreign key (migrations/00011): deleting an
// environment still removes its raw rows, as the cascade did.
func TestDeletedEnvironmentTakesItsRawRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, pool, env := seeded(t, measure.Config{})
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}
	user := "u1"
	now := time.Now()
	if err := svc.IngestImpressions(ctx, sdk, env, []measure.ImpressionInput{{FlagKey: "f", UserID: &user, Value: "true"}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.IngestEvents(ctx, sdk, env, []measure.GoalEventInput{{EventKey: "buy", UserID: &user}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.IngestSummaries(ctx, sdk, env, []measure.SummaryInput{{FlagKey: "f", Value: "true", Count: 3, Start: now, End: now}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM environments WHERE id = $1`, env); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM impressions) + (SELECT count(*) FROM goal_events)
		+ (SELECT count(*) FROM impression_summaries)`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d raw rows left after their environment was deleted", left)
	}
	err := svc.IngestImpressions(ctx, sdk, env, []measure.ImpressionInput{{FlagKey: "f", UserID: &user, Value: "true"}})
	if apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("ingest after the deletion: %v, want NotFound", err)
	}
}
