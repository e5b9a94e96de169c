// Command ingest measures Switchyard's measurement side (docs/performance.md,
// Measurement) on a scratch database of the local PostgreSQL:
//
//  1. Ingest: raw pgx CopyFrom of 500-row impression batches into the
//     impressions table (same rows, same indexes, no rollups: folding is
//     held off meanwhile and the rows are never folded) against the real
//     HTTP API (POST /api/environments/{env}/impressions with an SDK key,
//     the server started in-process via server/app, its rollup folder
//     running), with 1 and 4 writers, side by side, and their ratio. The
//     batches are built before the clock starts. After each ingest run a
//     read folds what the folder left, and its time is printed.
//  2. Queries: seeds -impressions impressions and -events goal events
//     through the ingest path (rollups included), then times per-flag
//     stats, exposure and experiment results through the HTTP API and
//     prints EXPLAIN (ANALYZE, BUFFERS) of every statement they run.
//
// Run it with `make bench-ingest` (or `go run .` in this directory); see
// -help for the sizes. docs/performance.md records the figures.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/server/measure"
	"github.com/switchyard/switchyard/server/store"
)

const batchSize = 500

type options struct {
	adminURL      string
	ingestRows    int
	writers       string
	impressions   int
	events        int
	flags         int
	users         int
	queryRuns     int
	keep          bool
	skipIngest    bool
	skipQueries   bool
	explain       bool
	dbMaxConns    int
	seedWriters   int
	experimentKey string
	cpuProfile    string
	maxBacklog    int64
}

func main() {
	var o options
	flag.StringVar(&o.adminURL, "db", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"PostgreSQL URL of a role that may create databases; a scratch database is created beside it")
	flag.IntVar(&o.ingestRows, "ingest-rows", 200_000, "rows per ingest measurement (raw and HTTP each)")
	flag.StringVar(&o.writers, "writers", "1,4", "comma-separated writer counts for the ingest comparison")
	flag.IntVar(&o.impressions, "impressions", 500_000, "impressions to seed before timing the queries (the target size is 5000000)")
	flag.IntVar(&o.events, "events", 50_000, "goal events to seed (the target size is 500000)")
	flag.IntVar(&o.flags, "flags", 20, "distinct flags in the seeded data")
	flag.IntVar(&o.users, "users", 250_000, "distinct users in the seeded data")
	flag.IntVar(&o.queryRuns, "runs", 5, "timed runs per query")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database")
	flag.BoolVar(&o.skipIngest, "skip-ingest", false, "skip the ingest comparison")
	flag.BoolVar(&o.skipQueries, "skip-queries", false, "skip seeding and the query timings")
	flag.BoolVar(&o.explain, "explain", true, "print EXPLAIN ANALYZE of the query statements")
	flag.IntVar(&o.dbMaxConns, "db-max-connections", 10, "the server's DB_MAX_CONNECTIONS")
	flag.IntVar(&o.seedWriters, "seed-writers", 4, "concurrent writers while seeding")
	flag.Int64Var(&o.maxBacklog, "fold-max-backlog", 0, "the server's rollup folder folds during ingest once this many rows are unfolded (measure.FolderConfig.MaxBacklog; 0: the default)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (client and in-process server) to this file")
	flag.Parse()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(context.Background(), o); err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, o options) error {
	dbURL, drop, err := scratchDatabase(ctx, o.adminURL, o.keep)
	if err != nil {
		return err
	}
	defer drop()

	cfg, err := config.FromEnv(func(k string) (string, bool) {
		v, ok := map[string]string{
			"DATABASE_URL": dbURL, "HOST": "127.0.0.1", "PORT": "0", "REDIS_URL": "",
			"COOKIE_SECURE": "false", "RUST_LOG": "warn", "PUBLIC_DIR": os.TempDir(),
			"DB_MAX_CONNECTIONS": fmt.Sprint(o.dbMaxConns),
		}[k]
		return v, ok
	})
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srvCtx, stop := context.WithCancel(ctx)
	a, err := app.New(srvCtx, cfg, logger, app.WithRollupFolder(measure.FolderConfig{MaxBacklog: o.maxBacklog}))
	if err != nil {
		stop()
		return err
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(srvCtx) }()
	defer func() { stop(); <-served }()
	base := "http://" + a.Addr()

	// Opened as the server opens its own, so that the core path encodes ids
	// the same way (store.Open).
	pool, err := store.Open(ctx, dbURL, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	envs, err := environments(ctx, pool)
	if err != nil {
		return err
	}
	fmt.Printf("PostgreSQL: %s\nserver: %s (DB_MAX_CONNECTIONS=%d)\n\n", serverVersion(ctx, pool), base, o.dbMaxConns)

	if !o.skipIngest {
		if err := compareIngest(ctx, o, pool, base, envs); err != nil {
			return err
		}
	}
	if !o.skipQueries {
		if err := timeQueries(ctx, o, pool, base, envs["production"]); err != nil {
			return err
		}
	}
	return nil
}

// scratchDatabase creates a fresh database next to adminURL's and returns
// its URL and a function that drops it.
func scratchDatabase(ctx context.Context, adminURL string, keep bool) (string, func(), error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect %s: %w", adminURL, err)
	}
	name := fmt.Sprintf("switchyard_bench_%d", time.Now().Unix())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return "", nil, err
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		defer admin.Close(ctx)
		if keep {
			fmt.Printf("kept database %s\n", name)
			return
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "drop %s: %v\n", name, err)
		}
	}, nil
}

func environments(ctx context.Context, pool *pgxpool.Pool) (map[string]uuid.UUID, error) {
	rows, err := pool.Query(ctx, `SELECT e.slug, e.id FROM environments e JOIN projects p ON p.id = e.project_id WHERE p.slug = 'default'`)
	if err != nil {
		return nil, err
	}
	out := map[string]uuid.UUID{}
	for rows.Next() {
		var slug string
		var id uuid.UUID
		if err := rows.Scan(&slug, &id); err != nil {
			return nil, err
		}
		out[slug] = id
	}
	return out, rows.Err()
}

func serverVersion(ctx context.Context, pool *pgxpool.Pool) string {
	var v string
	_ = pool.QueryRow(ctx, "SHOW server_version").Scan(&v)
	return v
}

// sdkKey stores a new SDK key for env and returns its full value.
func sdkKey(ctx context.Context, pool *pgxpool.Pool, env uuid.UUID) (string, error) {
	full, prefix, hash, err := auth.NewCredential(auth.SDKKeyKind)
	if err != nil {
		return "", err
	}
	_, err = pool.Exec(ctx, `INSERT INTO sdk_keys (project_id, environment_id, name, key_hash, prefix)
		SELECT project_id, id, 'bench', $2, $3 FROM environments WHERE id = $1`, env, hash, prefix)
	return full, err
}

// generator makes the synthetic impressions: uniformly random flags and
// users, boolean values for most flags and three string variants for every
// fifth, 3% anonymous. Ingest runs use evaluation times within the last
// minute (SDKs report as they evaluate); seeding spreads them over 30 days.
type generator struct {
	flags, users int
	now          time.Time
	spread       time.Duration // evaluated_at falls in [now-spread, now)
}

type impression struct {
	FlagKey     string    `json:"flag_key"`
	UserID      *string   `json:"user_id,omitempty"`
	Value       string    `json:"value"`
	EvaluatedAt time.Time `json:"evaluated_at"`
}

func (g generator) impression(r *rand.Rand) impression {
	f := r.IntN(g.flags)
	u := r.IntN(g.users)
	im := impression{FlagKey: fmt.Sprintf("flag-%02d", f), EvaluatedAt: g.now.Add(-time.Duration(r.Int64N(int64(g.spread))))}
	if f%5 == 0 {
		im.Value = []string{"control", "variant-a", "variant-b"}[(u*7+f)%3]
	} else {
		im.Value = []string{"true", "false"}[(u+f)%2]
	}
	if r.IntN(100) >= 3 {
		id := fmt.Sprintf("user-%06d", u)
		im.UserID = &id
	}
	return im
}

func (g generator) batch(r *rand.Rand) []impression {
	out := make([]impression, batchSize)
	for i := range out {
		out[i] = g.impression(r)
	}
	return out
}

// compareIngest runs raw CopyFrom and HTTP ingest of the same number of
// rows, per writer count, and prints rows/s and the ratio.
func compareIngest(ctx context.Context, o options, pool *pgxpool.Pool, base string, envs map[string]uuid.UUID) error {
	key, err := sdkKey(ctx, pool, envs["production"])
	if err != nil {
		return err
	}
	g := generator{flags: o.flags, users: o.users, now: time.Now(), spread: time.Minute}
	var writers []int
	for _, w := range strings.Split(o.writers, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(w), &n); err != nil || n < 1 {
			return fmt.Errorf("bad -writers %q", o.writers)
		}
		writers = append(writers, n)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	fmt.Printf("== Ingest: %d rows per run, %d-row batches, %d flags, %d users\n", o.ingestRows, batchSize, o.flags, o.users)
	svc := measure.New(pool, measure.Config{})
	principal := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: envs["development"]}
	fmt.Printf("%-8s %14s %14s %7s %16s %14s %14s\n", "writers", "raw rows/s", "HTTP rows/s", "ratio", "core rows/s", "HTTP fold", "core fold")
	// drain folds every row ingested so far (a read does that first) and
	// returns how long it took.
	drain := func() (time.Duration, error) {
		t := time.Now()
		_, err := svc.ImpressionStats(ctx, principal, envs["development"])
		return time.Since(t), err
	}
	for _, w := range writers {
		// The same batches for all three paths, built before the clock
		// starts (each path's own encoding, COPY rows, JSON bodies or core
		// items, included), so the runs time the sinks, not the generator.
		r := rand.New(rand.NewPCG(uint64(w), 1))
		n := o.ingestRows / batchSize
		rawRows := make([][][]any, n)
		bodies := make([][]byte, n)
		items := make([][]measure.ImpressionInput, n)
		for i := range n {
			b := g.batch(r)
			rawRows[i] = make([][]any, len(b))
			for j, im := range b {
				rawRows[i][j] = []any{pgtype.UUID{Bytes: envs["staging"], Valid: true}, im.FlagKey, im.UserID, im.Value, nil, im.EvaluatedAt}
			}
			if bodies[i], err = json.Marshal(b); err != nil {
				return err
			}
			items[i] = coreItems(b)
		}
		if _, err := drain(); err != nil {
			return err
		}
		// Raw: CopyFrom straight into impressions (staging), no rollups.
		raw, err := withoutFolding(ctx, pool, func() (time.Duration, error) {
			return each(w, n, func(_, i int) error {
				_, err := pool.CopyFrom(ctx, pgx.Identifier{"impressions"},
					[]string{"environment_id", "flag_key", "user_id", "value", "context", "evaluated_at"}, pgx.CopyFromRows(rawRows[i]))
				return err
			})
		})
		if err != nil {
			return fmt.Errorf("raw copy: %w", err)
		}
		// HTTP: the same rows through the API with an SDK key. The server's
		// background folder runs as configured.
		url := base + "/api/environments/" + envs["production"].String() + "/impressions"
		api, err := each(w, n, func(_, i int) error { return post(ctx, client, url, key, bodies[i]) })
		if err != nil {
			return fmt.Errorf("http ingest: %w", err)
		}
		apiFold, err := drain()
		if err != nil {
			return err
		}
		// Core: the server's ingest path without HTTP, to tell the SQL cost
		// from the HTTP and JSON cost.
		direct, err := each(w, n, func(_, i int) error {
			return svc.IngestImpressions(ctx, principal, envs["development"], items[i])
		})
		if err != nil {
			return fmt.Errorf("core ingest: %w", err)
		}
		directFold, err := drain()
		if err != nil {
			return err
		}
		rawRate := float64(o.ingestRows) / raw.Seconds()
		apiRate := float64(o.ingestRows) / api.Seconds()
		fmt.Printf("%-8d %14.0f %14.0f %6.0f%% %16.0f %14s %14s\n", w, rawRate, apiRate, 100*apiRate/rawRate,
			float64(o.ingestRows)/direct.Seconds(), ms(apiFold), ms(directFold))
	}
	fmt.Println("(HTTP fold, core fold: the read right after the run, which folds what the background folder left)")
	fmt.Println()
	return nil
}

// withoutFolding runs the raw baseline with folding held off, and then
// moves the impressions watermark past the rows it wrote: the baseline is
// COPY into the same table with the same indexes and no rollups, so its
// rows are never folded, and the folder cannot take CPU from it. Every row
// ingested before must have been folded already.
func withoutFolding(ctx context.Context, pool *pgxpool.Pool, run func() (time.Duration, error)) (time.Duration, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	// Folders lock this row first (server/measure/rollups.go).
	if _, err := tx.Exec(ctx, `SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions' FOR UPDATE`); err != nil {
		return 0, err
	}
	d, err := run()
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE rollup_watermarks SET folded_through = (SELECT max(id) FROM impressions) WHERE kind = 'impressions'`); err != nil {
		return 0, err
	}
	return d, tx.Commit(ctx)
}

// each calls fn for every batch index in 0..batches-1 across w workers
// (fn learns which worker runs it) and returns the wall time.
func each(w, batches int, fn func(worker, i int) error) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, w)
	start := time.Now()
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= batches {
					return
				}
				if err := fn(k, i); err != nil {
					errs[k] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return elapsed, nil
}

// parallel runs batches calls of the functions made by mk, one per worker
// (each with its own seed, so its own state), across w workers and returns
// the wall time.
func parallel(w, batches int, mk func(seed uint64) (func() error, error)) (time.Duration, error) {
	fns := make([]func() error, w)
	for i := range fns {
		fn, err := mk(uint64(i + 1))
		if err != nil {
			return 0, err
		}
		fns[i] = fn
	}
	return each(w, batches, func(worker, _ int) error { return fns[worker]() })
}

func post(ctx context.Context, client *http.Client, url, key string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("POST %s: %s %s", url, resp.Status, msg)
	}
	return nil
}

func get(ctx context.Context, client *http.Client, url, key string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %s", url, resp.Status, msg)
	}
	return nil
}

// timeQueries seeds the production environment through core's ingest path
// (COPY plus rollups, no HTTP, to save time), then times the three queries
// through the HTTP API and explains their statements.
func timeQueries(ctx context.Context, o options, pool *pgxpool.Pool, base string, env uuid.UUID) error {
	tracer := &sqlTracer{}
	tcfg := pool.Config().Copy()
	tcfg.ConnConfig.Tracer = tracer
	tpool, err := pgxpool.NewWithConfig(ctx, tcfg)
	if err != nil {
		return err
	}
	defer tpool.Close()
	svc := measure.New(tpool, measure.Config{})
	sdk := &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: env}

	g := generator{flags: o.flags, users: o.users, now: time.Now(), spread: 30 * 24 * time.Hour}
	start := time.Now()
	seeded, err := parallel(o.seedWriters, o.impressions/batchSize, func(seed uint64) (func() error, error) {
		r := rand.New(rand.NewPCG(seed, 2))
		return func() error {
			return svc.IngestImpressions(ctx, sdk, env, coreItems(g.batch(r)))
		}, nil
	})
	if err != nil {
		return fmt.Errorf("seed impressions: %w", err)
	}
	fmt.Printf("== Queries over %d impressions (%d flags, %d users) and %d goal events\n", o.impressions, o.flags, o.users, o.events)
	fmt.Printf("seeded impressions in %s (%.0f rows/s with %d writers)\n", seeded.Round(time.Millisecond), float64(o.impressions)/seeded.Seconds(), o.seedWriters)
	evSeeded, err := parallel(o.seedWriters, o.events/batchSize, func(seed uint64) (func() error, error) {
		r := rand.New(rand.NewPCG(seed, 3))
		return func() error {
			items := make([]measure.GoalEventInput, batchSize)
			for i := range items {
				u := fmt.Sprintf("user-%06d", r.IntN(o.users))
				at := g.now.Add(-time.Duration(r.Int64N(int64(30 * 24 * time.Hour))))
				items[i] = measure.GoalEventInput{EventKey: []string{"purchase", "signup"}[r.IntN(2)], UserID: &u, OccurredAt: &at}
			}
			return svc.IngestEvents(ctx, sdk, env, items)
		}, nil
	})
	if err != nil {
		return fmt.Errorf("seed events: %w", err)
	}
	fmt.Printf("seeded goal events in %s; total seeding %s\n", evSeeded.Round(time.Millisecond), time.Since(start).Round(time.Second))
	// Fold what the background folder left (a read folds first), so that
	// the timed reads below find an empty backlog.
	t := time.Now()
	if _, err := svc.ImpressionStats(ctx, sdk, env); err != nil {
		return err
	}
	fmt.Printf("folded the remaining backlog in %s\n", time.Since(t).Round(time.Millisecond))
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}

	key, err := sdkKey(ctx, pool, env)
	if err != nil {
		return err
	}
	if _, err := svc.CreateExperiment(ctx, sdk, env, measure.ExperimentInput{Key: "bench", Name: "bench", FlagKey: "flag-00", GoalEventKey: "purchase"}); err != nil {
		return err
	}
	client := &http.Client{}
	envPath := base + "/api/environments/" + env.String()
	queries := []struct {
		name, url string
		call      func() error
	}{
		{"per-flag stats", envPath + "/impressions/stats", func() error { _, err := svc.ImpressionStats(ctx, sdk, env); return err }},
		{"exposure (flag-00, 90 days)", envPath + "/impressions/exposure?flag_key=flag-00&days=90", func() error {
			_, err := svc.Exposure(ctx, sdk, env, ptr("flag-00"), ptr(int32(90)))
			return err
		}},
		{"experiment results (flag-00)", envPath + "/experiments/bench/results", func() error {
			_, err := svc.ExperimentResults(ctx, sdk, env, "bench")
			return err
		}},
		{"event key summary", envPath + "/events/keys", func() error { _, err := svc.ListEventKeys(ctx, sdk, env); return err }},
		{"impression list (first page, total)", envPath + "/impressions", func() error {
			_, err := svc.ListImpressions(ctx, sdk, env, measure.ImpressionFilter{})
			return err
		}},
	}
	fmt.Printf("%-38s %10s %10s %10s   (HTTP, %d runs)\n", "query", "min", "median", "max", o.queryRuns)
	for _, q := range queries {
		var times []time.Duration
		for range o.queryRuns {
			t := time.Now()
			if err := get(ctx, client, q.url, key); err != nil {
				return err
			}
			times = append(times, time.Since(t))
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		fmt.Printf("%-38s %10s %10s %10s\n", q.name, ms(times[0]), ms(times[len(times)/2]), ms(times[len(times)-1]))
	}
	if !o.explain {
		return nil
	}
	fmt.Println()
	for _, q := range queries {
		tracer.reset()
		if err := q.call(); err != nil {
			return err
		}
		for _, st := range tracer.statements() {
			if strings.Contains(st.sql, "FROM environments") || strings.Contains(st.sql, "FROM sdk_keys") ||
				strings.HasPrefix(strings.TrimSpace(st.sql), "begin") || strings.HasPrefix(strings.TrimSpace(st.sql), "commit") {
				continue // the access check, not the measurement
			}
			if strings.Contains(st.sql, "pg_advisory") || strings.Contains(st.sql, "rollup_watermarks") || strings.Contains(st.sql, "max(id)") {
				continue // the fold's barrier and watermark; nothing is left to fold here
			}
			fmt.Printf("== EXPLAIN ANALYZE: %s\n-- %s\n", q.name, firstLine(st.sql))
			rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+st.sql, st.args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					return err
				}
				fmt.Println(line)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			fmt.Println()
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func coreItems(batch []impression) []measure.ImpressionInput {
	items := make([]measure.ImpressionInput, len(batch))
	for i, im := range batch {
		items[i] = measure.ImpressionInput{FlagKey: im.FlagKey, UserID: im.UserID, Value: im.Value, EvaluatedAt: &im.EvaluatedAt}
	}
	return items
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// sqlTracer records the statements a pool runs, with their arguments.
type sqlTracer struct {
	mu    sync.Mutex
	stmts []statement
}

type statement struct {
	sql  string
	args []any
}

func (t *sqlTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stmts = append(t.stmts, statement{sql: data.SQL, args: data.Args})
	return ctx
}

func (t *sqlTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *sqlTracer) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stmts = nil
}

func (t *sqlTracer) statements() []statement {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]statement(nil), t.stmts...)
}

var _ pgx.QueryTracer = (*sqlTracer)(nil)
