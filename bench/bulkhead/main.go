// Command bulkhead measures what slow measurement reads cost flag writes
// (docs/performance.md, "Bounded reads"): one in-process server, 1,000
// PATCHes idle, then 1,000 while 20 measurement reads are held up at once
// (every measurement read takes the fold's watermarks first; a lock on
// them holds each read until its timeout, and the next one takes its
// place), p50 and p99 of each.
//
// Usage: go run . -db postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/bench/benchenv"
	"github.com/switchyard/switchyard/server/store"
)

const (
	dbName = "switchyard_bench_bulkhead"
	secret = "bench-bulkhead-secret-of-at-least-32-characters"
)

func main() {
	adminURL := flag.String("db", os.Getenv("TEST_DATABASE_URL"), "PostgreSQL URL of a database whose role may create databases")
	writes := flag.Int("writes", 1000, "flag writes idle and while the reads are held up")
	readers := flag.Int("readers", 20, "measurement reads held up at once")
	flag.Parse()
	err := run(context.Background(), *adminURL, *writes, *readers)
	err = errors.Join(err, benchenv.DropDatabase(context.Background(), *adminURL, dbName))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/bulkhead:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, adminURL string, writes, readers int) error {
	dbURL, err := benchenv.FreshDatabase(ctx, adminURL, dbName)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base, err := benchenv.StartApp(ctx, map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": "", "HOST": "127.0.0.1", "PORT": "0", "COOKIE_SECURE": "false",
		"RUST_LOG": "error", "SESSION_SECRET": secret, "ADMIN_EMAIL": "admin@bench.example", "ADMIN_PASSWORD": "bench-password-1",
		"PUBLIC_DIR": os.TempDir(), "MEASURE_READ_TIMEOUT": "2s",
	})
	if err != nil {
		return err
	}
	pool, err := store.Open(ctx, dbURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	token, err := benchenv.AdminToken(ctx, pool, "admin@bench.example")
	if err != nil {
		return err
	}
	var envID uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT e.id FROM environments e JOIN projects p ON p.id = e.project_id
		WHERE p.slug = 'default' AND e.slug = 'production'`).Scan(&envID); err != nil {
		return err
	}
	c := benchenv.Client{Token: token}
	flags := base + "/api/environments/" + envID.String() + "/flags"
	if err := c.Do(ctx, http.MethodPost, flags, map[string]any{"key": "bench", "is_enabled": true}, nil); err != nil {
		return err
	}
	patch := func(n int) ([]time.Duration, error) {
		var lat []time.Duration
		for i := range n {
			start := time.Now()
			if err := c.Do(ctx, http.MethodPatch, flags+"/bench", map[string]any{"rollout_percentage": i % 101}, nil); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(start))
		}
		return lat, nil
	}
	if _, err := patch(100); err != nil { // warm-up
		return err
	}
	idle, err := patch(writes)
	if err != nil {
		return err
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE rollup_watermarks IN ACCESS EXCLUSIVE MODE"); err != nil {
		return err
	}
	rctx, stopReads := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var reads, unavailable atomic.Int64
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := []string{"/flag-status", "/impressions/stats", "/impressions/exposure?flag_key=bench"}[i%3]
			for rctx.Err() == nil {
				err := c.Do(rctx, http.MethodGet, base+"/api/environments/"+envID.String()+path, nil, nil)
				reads.Add(1)
				if err != nil && rctx.Err() == nil {
					unavailable.Add(1)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	held, err := patch(writes)
	stopReads()
	wg.Wait()
	if err != nil {
		return err
	}
	fmt.Printf("flag writes (PATCH), %d each\n", writes)
	fmt.Printf("  %-36s p50 %6.2f ms  p99 %6.2f ms\n", "idle", ms(pct(idle, 50)), ms(pct(idle, 99)))
	fmt.Printf("  %-36s p50 %6.2f ms  p99 %6.2f ms\n", fmt.Sprintf("%d measurement reads held up", readers), ms(pct(held, 50)), ms(pct(held, 99)))
	fmt.Printf("  p99 with the reads held up: %+.1f %% of idle\n", 100*(float64(pct(held, 99))/float64(pct(idle, 99))-1))
	fmt.Printf("  measurement reads meanwhile: %d, of which %d answered 503 at their timeout\n", reads.Load(), unavailable.Load())
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
