package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/measure"
)

func TestRetentionPurge(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	old := t0.AddDate(0, 0, -100)
	me.mustPost(t, "/impressions", []any{
		imp("f", "u1", "A", old), // u1's first exposure, purged: B becomes it
		imp("f", "u1", "B", t0.Add(-time.Hour)),
		imp("f", "u2", "A", old), // u2 disappears
		imp("f", "u3", "A", t0.Add(-2*time.Hour)),
		imp("gone", "u1", "x", old), // a flag with nothing left
		// Day-aligned cutoff: midnight UTC 90 days before t0 is kept.
		imp("f", "u4", "A", t0.Truncate(24*time.Hour).AddDate(0, 0, -90)),
		imp("f", "u5", "A", t0.Truncate(24*time.Hour).AddDate(0, 0, -90).Add(-time.Microsecond)),
	})
	me.mustPost(t, "/impressions/summaries", []any{
		summary("f", "A", 4, old, old),
		summary("gone", "x", 9, old.Add(-time.Hour), old),
	})
	me.mustPost(t, "/events", []any{
		goal("buy", "u1", old.Add(time.Hour)),
		goal("buy", "u1", t0.Add(-time.Minute)),
		goal("buy", "u3", old.Add(time.Hour)), // u3 converted only before the cutoff
		goal("stale", "u3", old),
	})
	me.experiment(t, "exp", "f", "buy", "A")
	before := me.results(t, "exp")
	if before.TotalExposed != 5 {
		t.Fatalf("before purge: %+v", before)
	}

	pool, err := pgxpool.New(t.Context(), me.s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	svc := measure.New(pool, measure.Config{Now: me.clock.Now})
	res, err := svc.PurgeExpired(t.Context(), measure.RetentionConfig{Days: 90, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Impressions != 4 || res.Summaries != 2 || res.GoalEvents != 3 || !res.Cutoff.Equal(time.Date(2025, 12, 10, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("purge = %+v, want 4 impressions, 2 summaries and 3 goal events before 2025-12-10", res)
	}

	_, raw := me.call(t, "GET", me.path("/impressions/stats"), nil)
	var stats []statsEntry
	decode(t, raw, &stats)
	wantStats := []statsEntry{{FlagKey: "f", Total: 3, UniqueUsers: 3, LastSeen: t0.Add(-time.Hour)}}
	if d := cmp.Diff(wantStats, stats); d != "" {
		t.Errorf("stats after purge (-want +got):\n%s", d)
	}
	if l := me.list(t, ""); l.Total != 3 || len(l.Items) != 3 {
		t.Errorf("list after purge: total %d, %d items", l.Total, len(l.Items))
	}
	_, raw = me.call(t, "GET", me.path("/impressions/exposure?flag_key=f"), nil)
	var ex exposure
	decode(t, raw, &ex)
	if ex.TotalImpressions != 3 || ex.TotalUsers != 3 || len(ex.Variants) != 2 ||
		ex.Variants[0].UniqueUsers != 2 || ex.Variants[1].UniqueUsers != 1 {
		t.Errorf("exposure after purge = %+v", ex)
	}
	_, raw = me.call(t, "GET", me.path("/events/keys"), nil)
	var keys []eventKey
	decode(t, raw, &keys)
	if d := cmp.Diff([]eventKey{{EventKey: "buy", Total: 1, UniqueUsers: 1, LastSeen: t0.Add(-time.Minute)}}, keys); d != "" {
		t.Errorf("event keys after purge (-want +got):\n%s", d)
	}
	// u1 is now in B (first remaining impression) and converted; u3 no longer.
	after := me.results(t, "exp")
	want := experimentResult{ControlVariant: ptrTo("A"), TotalExposed: 3, TotalConverted: 1}
	if after.ControlVariant == nil || *after.ControlVariant != "A" || after.TotalExposed != want.TotalExposed ||
		after.TotalConverted != want.TotalConverted || len(after.Variants) != 2 ||
		after.Variants[1].Variant != "B" || after.Variants[1].Converted != 1 || after.Variants[0].Exposed != 2 {
		t.Errorf("results after purge = %+v", after)
	}

	// A second purge finds nothing.
	if res, err := svc.PurgeExpired(t.Context(), measure.RetentionConfig{Days: 90}); err != nil || res.Impressions+res.GoalEvents+res.UsersRefreshed != 0 {
		t.Errorf("second purge = %+v, %v", res, err)
	}
}

func TestRetentionLoopStops(t *testing.T) {
	t.Parallel()
	me := newMeasEnv(t)
	pool, err := pgxpool.New(t.Context(), me.s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	me.mustPost(t, "/impressions", []any{imp("f", "u1", "A", t0.AddDate(0, 0, -10))})
	// A clock 30 days later with 7 days' retention: the first pass purges.
	later := func() time.Time { return t0.AddDate(0, 0, 30) }
	svc := measure.New(pool, measure.Config{Now: later})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.RunRetention(ctx, measure.RetentionConfig{Days: 7, Interval: time.Hour})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for me.list(t, "").Total != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the retention loop did not purge")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the retention loop did not stop")
	}
}
