package measure_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// ingestN ingests n impressions in batches of at most 500.
func ingestN(ctx context.Context, svc *measure.Service, p *auth.Principal, n int) error {
	for done := 0; done < n; done += measure.MaxBatchItems {
		items := make([]measure.ImpressionInput, min(measure.MaxBatchItems, n-done))
		for i := range items {
			u := fmt.Sprintf("user-%d", done+i)
			items[i] = measure.ImpressionInput{FlagKey: "gated", UserID: &u, Value: "true"}
		}
		if err := svc.IngestImpressions(ctx, p, p.EnvironmentID, items); err != nil {
			return err
		}
	}
	return nil
}

// At the tail limit, ingest waits for the folder, on every instance (two
// services on one database), and goes on once the folder has folded.
func TestIngestWaitsForTheFolderAtTheTailLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var waits atomic.Int64
	a, pool, env := seeded(t, measure.Config{MaxTail: 1000})
	b := measure.New(pool, measure.Config{MaxTail: 1000, GateWaited: func() { waits.Add(1) }})
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}
	if err := ingestN(ctx, a, sdk, 1000); err != nil {
		t.Fatal(err)
	}
	if err := ingestN(ctx, b, sdk, 0); err != nil || waits.Load() != 0 {
		t.Fatalf("an empty batch: err %v, %d waits", err, waits.Load())
	}
	done := make(chan error, 1)
	go func() { done <- ingestN(ctx, b, sdk, 500) }()
	// Several looks at the backlog long: nothing folds meanwhile, so the
	// batch must still be waiting.
	select {
	case err := <-done:
		t.Fatalf("ingest over the tail limit returned (%v) with no folder running", err)
	case <-time.After(400 * time.Millisecond):
	}
	if got := unfolded(t, pool); got != 1000 {
		t.Fatalf("unfolded rows = %d while the batch waits, want 1000", got)
	}
	foldAll(t, a, pool)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ingest still waiting 20 s after the fold")
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM impressions WHERE flag_key = 'gated'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1500 {
		t.Fatalf("impressions = %d, want 1500", n)
	}
	if got := waits.Load(); got != 1 {
		t.Errorf("waits counted = %d, want 1", got)
	}
}

// A batch that has waited AdmitWait is taken anyway: a folder that cannot
// catch up slows reads, it never makes the server refuse measurements.
func TestIngestAtTheTailLimitIsTakenAfterTheWait(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const wait = 300 * time.Millisecond
	var waits, overflows atomic.Int64
	svc, pool, env := seeded(t, measure.Config{MaxTail: 500, AdmitWait: wait,
		GateWaited: func() { waits.Add(1) }, GateOverflowed: func() { overflows.Add(1) }})
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}
	if err := ingestN(ctx, svc, sdk, 500); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := ingestN(ctx, svc, sdk, 500); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < wait {
		t.Fatalf("the batch over the limit was taken after %v, before the wait of %v", took, wait)
	}
	if got := unfolded(t, pool); got != 1000 {
		t.Fatalf("unfolded rows = %d, want 1000", got)
	}
	if waits.Load() != 0 || overflows.Load() != 1 {
		t.Errorf("counted %d waits and %d overflows, want 0 and 1", waits.Load(), overflows.Load())
	}
}

// A caller that departs while waiting at the gate gets its context's error
// and nothing is copied.
func TestIngestWaitingAtTheGateEndsWithItsContext(t *testing.T) {
	t.Parallel()
	svc, pool, env := seeded(t, measure.Config{MaxTail: 500})
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}
	if err := ingestN(context.Background(), svc, sdk, 500); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := ingestN(ctx, svc, sdk, 500); err != context.DeadlineExceeded {
		t.Fatalf("err = %v, want %v", err, context.DeadlineExceeded)
	}
	if got := unfolded(t, pool); got != 500 {
		t.Fatalf("unfolded rows = %d, want 500", got)
	}
}
