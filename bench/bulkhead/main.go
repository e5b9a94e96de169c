// Command bulkhead measures what slow measurement reads cost flag writes
// (docs/performance.md, "Slow measurement reads and flag writes"): one
// in-process server; in each of -rounds rounds, 1,000 PATCHes idle, then
// 1,000 while 20 measurement reads are held up at once (every measurement
// read takes the fold's watermarks first; a lock on them holds each read
// until its timeout, and the client sends the next at once); p50 and p99
// of each, and the median over the rounds of what the held-up reads add
// to the p99.
//
// Usage: go run . -db postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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
	rounds := flag.Int("rounds", 5, "rounds of idle and held-up writes (their median is the result)")
	flag.Parse()
	err := run(context.Background(), *adminURL, *writes, *readers, *rounds)
	err = errors.Join(err, benchenv.DropDatabase(context.Background(), *adminURL, dbName))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/bulkhead:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, adminURL string, writes, readers, rounds int) error {
	dbURL, err := benchenv.FreshDatabase(ctx, adminURL, dbName)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := benchenv.Settings(dbURL, "", secret)
	env["MEASURE_READ_TIMEOUT"] = "2s"
	base, err := benchenv.StartApp(ctx, env)
	if err != nil {
		return err
	}
	pool, err := store.Open(ctx, dbURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	token, err := benchenv.AdminToken(ctx, pool, benchenv.Admin)
	if err != nil {
		return err
	}
	envID, _, err := benchenv.Production(ctx, pool)
	if err != nil {
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
	fmt.Printf("flag writes (PATCH), %d idle then %d while %d measurement reads are held up, per round\n", writes, writes, readers)
	var ratios []float64
	var reads, unavailable atomic.Int64
	for r := range rounds {
		idle, err := patch(writes)
		if err != nil {
			return err
		}
		held, err := whileHeld(ctx, pool, readers, func(ctx context.Context) error {
			return c.Do(ctx, http.MethodGet, base+"/api/environments/"+envID.String()+[]string{"/flag-status", "/impressions/stats", "/impressions/exposure?flag_key=bench"}[rand.IntN(3)], nil, nil)
		}, &reads, &unavailable, func() ([]time.Duration, error) { return patch(writes) })
		if err != nil {
			return err
		}
		ratio := 100 * (float64(pct(held, 99))/float64(pct(idle, 99)) - 1)
		ratios = append(ratios, ratio)
		fmt.Printf("  round %d  idle p50 %5.2f ms p99 %6.2f ms  held up p50 %5.2f ms p99 %6.2f ms  p99 %+6.1f %%\n",
			r+1, ms(pct(idle, 50)), ms(pct(idle, 99)), ms(pct(held, 50)), ms(pct(held, 99)), ratio)
	}
	slices.Sort(ratios)
	fmt.Printf("  p99 with the reads held up, median of the rounds: %+.1f %% of idle\n", ratios[len(ratios)/2])
	fmt.Printf("  measurement reads meanwhile: %d, of which %d answered 503 at their timeout\n", reads.Load(), unavailable.Load())
	return nil
}

// whileHeld runs writes while readers clients keep sending read, each held
// up by a lock on the fold's watermarks until its timeout.
func whileHeld(ctx context.Context, pool *pgxpool.Pool, readers int, read func(context.Context) error, reads, unavailable *atomic.Int64, writes func() ([]time.Duration, error)) ([]time.Duration, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE rollup_watermarks IN ACCESS EXCLUSIVE MODE"); err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rctx.Err() == nil {
				err := read(rctx)
				reads.Add(1)
				if err != nil && rctx.Err() == nil {
					unavailable.Add(1)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the reads are held up
	lat, err := writes()
	stop()
	wg.Wait()
	return lat, err
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
