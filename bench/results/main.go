// Command results measures experiment results (docs/performance.md,
// "Experiment results"): one in-process server on a scratch database, one
// experiment over a three-variant flag, its exposed users grown through
// -sizes with -goal-share of them sending goal events, copied into the raw
// tables and folded by the server. At each size it times GET …/results
// read from the kept counts and computed from every user (the server's
// path while the counts are being built), with fresh planner statistics
// and with them reset (as after a bulk load that no ANALYZE followed), and
// from the kept counts while -writers send impressions and goal events
// over HTTP as fast as the ingest gate takes them, like bench/analytics.
//
// Usage: go run . -db postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/bench/benchenv"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/measure"
	"github.com/switchyard/switchyard/server/store"
)

const (
	dbName = "switchyard_bench_results"
	secret = "bench-results-secret-of-at-least-32-characters"
)

// opts are the tool's settings.
type opts struct {
	adminURL    string
	sizes       []int
	goalShare   float64
	reads, slow int
	writers     int
	loadReads   int
	keep        bool
}

func main() {
	var o opts
	sizes := flag.String("sizes", "100000,1000000", "exposed users of the experiment at each step, comma-separated, increasing")
	flag.StringVar(&o.adminURL, "db", os.Getenv("TEST_DATABASE_URL"), "PostgreSQL URL of a superuser (it resets planner statistics)")
	flag.Float64Var(&o.goalShare, "goal-share", 0.2, "share of the exposed users that send goal events")
	flag.IntVar(&o.reads, "reads", 500, "reads timed from the kept counts, per scenario")
	flag.IntVar(&o.slow, "recomputed-reads", 20, "reads timed computed from every user, per scenario")
	flag.IntVar(&o.writers, "writers", 4, "concurrent ingest writers of 500-row batches in the scenario under ingest")
	flag.IntVar(&o.loadReads, "load-reads", 500, "reads timed under ingest")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database "+dbName)
	flag.Parse()
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 || len(o.sizes) > 0 && n <= o.sizes[len(o.sizes)-1] {
			fmt.Fprintln(os.Stderr, "bench/results: -sizes must be increasing positive integers")
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	err := run(context.Background(), o)
	if !o.keep {
		err = errors.Join(err, benchenv.DropDatabase(context.Background(), o.adminURL, dbName))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/results:", err)
		os.Exit(1)
	}
}

// bench is one run's server, database and experiment.
type bench struct {
	o       opts
	pool    *pgxpool.Pool
	svc     *measure.Service
	c       benchenv.Client
	env     uuid.UUID
	base    string // the environment's API path
	now     time.Time
	results string
	loaded  int // users copied in so far
}

func run(ctx context.Context, o opts) error {
	dbURL, err := benchenv.FreshDatabase(ctx, o.adminURL, dbName)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The tool builds the counts itself (measure.BuildExperimentCounts), to
	// time both ways of reading and the build.
	root, err := benchenv.StartApp(ctx, benchenv.Settings(dbURL, "", secret), app.WithoutExperimentCounts())
	if err != nil {
		return err
	}
	pool, err := store.Open(ctx, dbURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	token, err := benchenv.AdminToken(ctx, pool, benchenv.Admin)
	if err != nil {
		return err
	}
	b := &bench{o: o, pool: pool, svc: measure.New(pool, measure.Config{}), c: benchenv.Client{Token: token}, now: time.Now().UTC()}
	if b.env, _, err = benchenv.Production(ctx, pool); err != nil {
		return err
	}
	b.base = root + "/api/environments/" + b.env.String()
	b.results = b.base + "/experiments/bench/results"
	if err := b.c.Do(ctx, http.MethodPost, b.base+"/experiments", map[string]any{
		"key": "bench", "name": "bench", "flag_key": "flag-00", "goal_event_key": "buy", "control_variant": "A",
	}, nil); err != nil {
		return err
	}
	fmt.Printf("experiment results: one experiment over a flag of 3 variants, %.0f %% of its users converting; p50 / p99 (reads)\n", 100*o.goalShare)
	loaded := 0
	for _, n := range o.sizes {
		start := time.Now()
		if err := b.load(ctx, loaded, n); err != nil {
			return err
		}
		copied := time.Since(start)
		if err := b.waitFolded(ctx); err != nil {
			return err
		}
		fmt.Printf("\n%d exposed users (copied in %s, folded by the server in %s more)\n", n, copied.Round(time.Second), (time.Since(start) - copied).Round(time.Second))
		loaded, b.loaded = n, n
		if err := b.size(ctx); err != nil {
			return err
		}
	}
	return nil
}

// size runs the scenarios at the loaded size.
func (b *bench) size(ctx context.Context) error {
	if err := b.analyze(ctx); err != nil {
		return err
	}
	var users, goals int64
	if err := b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM impression_users u JOIN measure_flags f USING (flag_no) WHERE f.flag_key = 'flag-00' AND u.first),
		(SELECT count(*) FROM goal_event_users WHERE event_key = 'buy')`).Scan(&users, &goals); err != nil {
		return err
	}
	fmt.Printf("  (the experiment's flag: %d first exposures; its goal: %d users)\n", users, goals)
	if _, err := b.pool.Exec(ctx, `UPDATE experiment_metrics SET ready = false`); err != nil {
		return err
	}
	if err := b.report(ctx, "recomputed, fresh statistics", b.o.slow, "recomputed"); err != nil {
		return err
	}
	if err := b.resetStatistics(ctx); err != nil {
		return err
	}
	if err := b.report(ctx, "recomputed, statistics reset", max(3, b.o.slow/4), "recomputed"); err != nil {
		return err
	}
	if err := b.analyze(ctx); err != nil {
		return err
	}
	start := time.Now()
	if built, err := b.svc.BuildExperimentCounts(ctx); err != nil || !built {
		return fmt.Errorf("build the counts: %v %w", built, err)
	}
	fmt.Printf("  building the kept counts took %s\n", time.Since(start).Round(time.Millisecond))
	if err := b.report(ctx, "kept counts, fresh statistics", b.o.reads, "maintained"); err != nil {
		return err
	}
	if err := b.resetStatistics(ctx); err != nil {
		return err
	}
	if err := b.report(ctx, "kept counts, statistics reset", b.o.reads, "maintained"); err != nil {
		return err
	}
	if err := b.analyze(ctx); err != nil {
		return err
	}
	if err := b.underIngest(ctx, "kept counts, ingest at 2,200 rows/s", 4); err != nil {
		return err
	}
	return b.underIngest(ctx, "kept counts, ingest as fast as taken", 0)
}

// report times n reads and prints them; each must come from source.
func (b *bench) report(ctx context.Context, name string, n int, source string) error {
	lat, err := b.readN(ctx, n, source)
	var slow errTooSlow
	if errors.As(err, &slow) {
		fmt.Printf("  %-38s answered 503 after the read timeout (MEASURE_READ_TIMEOUT, 30 s)\n", name)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("  %-38s %8.1f ms / %8.1f ms  (%d)\n", name, ms(pct(lat, 50)), ms(pct(lat, 99)), len(lat))
	return nil
}

func (b *bench) readN(ctx context.Context, n int, source string) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		got, err := b.read(ctx)
		if err != nil {
			return nil, err
		}
		if got != source {
			return nil, fmt.Errorf("results came from %q, want %q", got, source)
		}
		lat = append(lat, time.Since(start))
	}
	return lat, nil
}

// read gets the results once and returns their X-Results-Source.
func (b *bench) read(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.results, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+b.c.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		TotalExposed int64 `json:"total_exposed"`
	}
	if err := decode(resp, &body); err != nil {
		return "", err
	}
	if body.TotalExposed == 0 {
		return "", errors.New("results count no exposed users")
	}
	return resp.Header.Get("X-Results-Source"), nil
}

// measured are the tables whose statistics the scenarios refresh or reset.
var measured = []string{"impressions", "goal_events", "impression_users", "goal_event_users", "measure_flags",
	"measure_values", "experiment_metrics", "experiment_arm_counts"}

func (b *bench) analyze(ctx context.Context) error {
	_, err := b.pool.Exec(ctx, "ANALYZE "+strings.Join(measured, ", "))
	return err
}

// resetStatistics leaves the planner with no statistics of the measured
// tables, as after a bulk load that no ANALYZE followed: no column
// statistics, and sizes estimated from the tables' pages.
func (b *bench) resetStatistics(ctx context.Context) error {
	if _, err := b.pool.Exec(ctx, `DELETE FROM pg_statistic WHERE starelid = ANY ($1::regclass[])`, measured); err != nil {
		return err
	}
	_, err := b.pool.Exec(ctx, `UPDATE pg_class SET reltuples = -1 WHERE oid = ANY ($1::regclass[])`, measured)
	return err
}

// load copies the impressions of users [from, to) into the raw table, and
// the goal events of goalShare of them, as ingest would (under its shared
// lock, so that the fold's barrier waits for the copy).
func (b *bench) load(ctx context.Context, from, to int) error {
	rng := rand.New(rand.NewPCG(uint64(from), uint64(to)))
	var imps, goals [][]any
	for u := from; u < to; u++ {
		user := fmt.Sprintf("user-%07d", u)
		at := b.now.Add(-time.Duration(rng.Int64N(int64(7 * 24 * time.Hour))))
		imps = append(imps, []any{b.env, "flag-00", user, []string{"A", "B", "C"}[rng.IntN(3)], at})
		if rng.IntN(5) == 0 { // a second impression later, of the same or another variant
			imps = append(imps, []any{b.env, "flag-00", user, []string{"A", "B", "C"}[rng.IntN(3)], at.Add(time.Hour)})
		}
		if rng.Float64() < b.o.goalShare {
			// Mostly after the exposure; one in ten before it, which does not count.
			goals = append(goals, []any{b.env, "buy", user, at.Add(time.Duration(rng.Int64N(int64(26*time.Hour))) - 2*time.Hour), b.now})
		}
	}
	for _, c := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"impressions", []string{"environment_id", "flag_key", "user_id", "value", "evaluated_at"}, imps},
		{"goal_events", []string{"environment_id", "event_key", "user_id", "occurred_at", "received_at"}, goals},
	} {
		if err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock_shared(7313092251183417002)"); err != nil {
				return err
			}
			_, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows))
			return err
		}); err != nil {
			return fmt.Errorf("copy %s: %w", c.table, err)
		}
	}
	return nil
}

// waitFolded waits until the server has folded every raw row.
func (b *bench) waitFolded(ctx context.Context) error {
	for {
		var left bool
		if err := b.pool.QueryRow(ctx, `SELECT (SELECT coalesce(max(id), 0) FROM impressions) > (SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions')
			OR (SELECT coalesce(max(id), 0) FROM goal_events) > (SELECT folded_through FROM rollup_watermarks WHERE kind = 'events')`).Scan(&left); err != nil {
			return err
		}
		if !left {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// underIngest times reads from the kept counts while the writers send
// 500 impressions of 10 flags (the experiment's among them) and 50 goal
// events at a time, for users of the population and a tenth as many new
// ones: perSecond such batches a second in all (2,200 rows/s at 4, the
// production shape of bench/analytics in rows: about 2,000 first-seen
// impressions a second), or as fast as the ingest gate takes them at 0.
func (b *bench) underIngest(ctx context.Context, name string, perSecond int) error {
	ictx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var rows atomic.Int64
	var failed atomic.Pointer[error]
	var tick <-chan time.Time
	if perSecond > 0 {
		t := time.NewTicker(time.Second / time.Duration(perSecond))
		defer t.Stop()
		tick = t.C
	}
	population := b.loaded + b.loaded/10
	for w := range b.o.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(population)))
			for ictx.Err() == nil {
				if tick != nil {
					select {
					case <-ictx.Done():
						return
					case <-tick:
					}
				}
				now := time.Now().UTC().Format(time.RFC3339Nano)
				imps := make([]map[string]any, 500)
				for i := range imps {
					imps[i] = map[string]any{"flag_key": fmt.Sprintf("flag-%02d", rng.IntN(10)), "user_id": fmt.Sprintf("user-%07d", rng.IntN(population)),
						"value": []string{"A", "B", "C"}[rng.IntN(3)], "evaluated_at": now}
				}
				events := make([]map[string]any, 50)
				for i := range events {
					events[i] = map[string]any{"event_key": "buy", "user_id": fmt.Sprintf("user-%07d", rng.IntN(population)), "occurred_at": now}
				}
				for _, post := range []struct {
					path string
					body any
				}{{"/impressions", imps}, {"/events", events}} {
					if err := b.c.Do(ictx, http.MethodPost, b.base+post.path, post.body, nil); err != nil {
						if ictx.Err() == nil {
							failed.Store(&err)
						}
						return
					}
				}
				rows.Add(550)
			}
		}()
	}
	time.Sleep(3 * time.Second) // the tail builds up to its usual length
	before, start := rows.Load(), time.Now()
	lat, err := b.readN(ctx, b.o.loadReads, "maintained")
	rate := float64(rows.Load()-before) / time.Since(start).Seconds()
	stop()
	wg.Wait()
	if err != nil {
		return err
	}
	if e := failed.Load(); e != nil {
		return *e
	}
	fmt.Printf("  %-38s %8.1f ms / %8.1f ms  (%d; %.0f rows/s taken meanwhile)\n", name, ms(pct(lat, 50)), ms(pct(lat, 99)), len(lat), rate)
	return b.waitFolded(ctx)
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// errTooSlow is a read that ran past the server's timeout for measurement
// reads (503).
type errTooSlow struct{}

func (errTooSlow) Error() string { return "GET results: 503 (the read timed out)" }

func decode(resp *http.Response, out any) error {
	if resp.StatusCode == http.StatusServiceUnavailable {
		return errTooSlow{}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET results: %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
