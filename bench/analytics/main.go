// Command analytics measures Switchyard's analytics at production traffic
// (docs/performance.md, Analytics at production traffic) against the real
// server (bin/switchyard built from the repository and started as a process
// of its own, so that its CPU is its own) on scratch databases of the local
// PostgreSQL, dropped afterwards:
//
//  1. Production shape: the real Go SDK (sdkgo) evaluates 10 flags for
//     users drawn from a Zipf (s = 1.1) population of 100,000 at 10,000
//     evaluations/s. Rows inserted plus rows updated across all tables
//     (pg_stat_user_tables), split into rows per first-seen (flag, user,
//     value) and rows per evaluation besides, a day of this traffic
//     extrapolated from both, the server's and PostgreSQL's CPU, and every
//     statistic checked against the tool's own tally (a mismatch fails the
//     run).
//  2. Per-evaluation senders, fresh environment: 4 writers of 500-item
//     impression batches. Raw pgx COPY, HTTP ingest with no fold at all (the
//     ceiling), HTTP ingest through the gate until visible in
//     GET …/impressions (total), and the fold alone, each into the same
//     environment of its own copy of the same template (databases.go,
//     fair.go), -runs rounds; medians, CPU and WAL per row.
//  3. The same in an environment seeded with -seed-impressions impressions
//     through the server's own ingest and fold, plus the gated run while a
//     reader cycles stats, exposure and experiment results (p50/p99).
//
// Run it with `make bench-analytics` (the -short preset) or with the full
// sizes, `make bench-analytics BENCH_ANALYTICS_FLAGS=-full`.
// docs/performance.md records the figures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type options struct {
	adminURL string
	repo     string
	bin      string
	keep     bool
	short    bool
	full     bool

	// 1. production shape
	duration       time.Duration
	rate           int
	users          int
	zipfS          float64
	exposureMemory int
	skipProduction bool

	// 2. and 3.
	seedImpressions int
	seedEvents      int
	ingestRows      int
	freshRows       int
	runs            int
	skipFresh       bool
	skipSeeded      bool
	seeded          string
	keepSeeded      bool
	modes           string
	env             string
	writers         int
	readers         int
	loadTime        time.Duration
	skipIngest      bool
	dbMaxConns      int
}

// errMismatch marks a statistic that differs from the tool's own count.
var errMismatch = errors.New("statistics do not match the evaluations made")

func main() {
	var o options
	flag.StringVar(&o.adminURL, "db", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"PostgreSQL URL of a role that may create databases; a scratch database is created beside it and dropped afterwards")
	flag.StringVar(&o.repo, "repo", "../..", "repository root (the server is built from it)")
	flag.StringVar(&o.bin, "bin", "", "use this switchyard binary instead of building one")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database")
	flag.BoolVar(&o.short, "short", false, "small preset: -duration 20s -seed-impressions 300000 -seed-events 30000 -ingest-rows 100000 -fresh-rows 100000 -load-time 15s -runs 1")
	flag.BoolVar(&o.full, "full", false, "the full sizes: -duration 60s -seed-impressions 5000000 -seed-events 500000 -ingest-rows 500000 -fresh-rows 200000 -load-time 60s -runs 3")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "production shape: how long the SDK evaluates")
	flag.IntVar(&o.rate, "rate", 10_000, "production shape: evaluations per second (10 flags per request)")
	flag.IntVar(&o.users, "users", 100_000, "production shape: population")
	flag.Float64Var(&o.zipfS, "zipf-s", 1.1, "production shape: Zipf exponent of the user draw (> 1)")
	flag.IntVar(&o.exposureMemory, "exposure-memory", -1, "production shape: sdkgo.WithExposureMemory (-1: the SDK's default)")
	flag.BoolVar(&o.skipProduction, "skip-production", false, "skip the production shape (1)")
	flag.IntVar(&o.seedImpressions, "seed-impressions", 5_000_000, "reads under load: impressions in the environment read (the full size is 5000000)")
	flag.IntVar(&o.seedEvents, "seed-events", 500_000, "reads under load: goal events seeded beside them")
	flag.IntVar(&o.ingestRows, "ingest-rows", 500_000, "per-evaluation senders into the seeded environment: rows per run")
	flag.IntVar(&o.freshRows, "fresh-rows", 200_000, "per-evaluation senders into a fresh environment: rows per run")
	flag.IntVar(&o.runs, "runs", 3, "rounds of every ingest mode (figures are their medians)")
	flag.BoolVar(&o.skipFresh, "skip-fresh", false, "skip the fresh-environment scenario")
	flag.BoolVar(&o.skipSeeded, "skip-seeded", false, "skip the seeded-environment scenario (and the reads under load)")
	flag.StringVar(&o.seeded, "seeded", "", "use this database, the seeded template of an earlier run of the same code kept with -keep, instead of seeding one (it is not dropped)")
	flag.BoolVar(&o.keepSeeded, "keep-seeded", false, "keep the seeded template (for -seeded in later runs), dropping the rest")
	flag.StringVar(&o.env, "server-env", "", "extra environment of the measured servers, comma-separated NAME=VALUE (e.g. INGEST_MAX_UNFOLDED=50000)")
	flag.StringVar(&o.modes, "modes", "copy,ceiling,gated,readers,fold", "the modes to run, of copy, ceiling, gated, readers (seeded environment only), fold")
	flag.IntVar(&o.writers, "writers", 4, "per-evaluation senders: concurrent writers")
	flag.IntVar(&o.readers, "readers", 1, "reads under load: concurrent readers, each cycling stats, exposure, experiment results")
	flag.DurationVar(&o.loadTime, "load-time", 60*time.Second, "reads under load: the HTTP ingest with readers goes on at least this long, repeating its batches")
	flag.BoolVar(&o.skipIngest, "skip-ingest", false, "skip (2) and (3)")
	flag.IntVar(&o.dbMaxConns, "db-max-connections", 10, "the server's DB_MAX_CONNECTIONS")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	preset := func(name, value string) {
		if !set[name] {
			_ = flag.Set(name, value)
		}
	}
	switch {
	case o.short && o.full:
		log.Fatal("-short and -full exclude each other")
	case o.short:
		preset("duration", "20s")
		preset("seed-impressions", "300000")
		preset("seed-events", "30000")
		preset("ingest-rows", "100000")
		preset("fresh-rows", "100000")
		preset("load-time", "15s")
		preset("runs", "1")
	case o.full:
		preset("duration", "60s")
		preset("seed-impressions", "5000000")
		preset("seed-events", "500000")
		preset("ingest-rows", "500000")
		preset("fresh-rows", "200000")
		preset("load-time", "60s")
		preset("runs", "3")
	}
	if o.zipfS <= 1 {
		log.Fatal("-zipf-s must be above 1")
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := run(ctx, o)
	cancel()
	if err != nil {
		if errors.Is(err, errMismatch) {
			fmt.Fprintf(os.Stderr, "\n!!!!!!!! FAIL: %v\n", err)
			os.Exit(2)
		}
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
	start := time.Now()
	logDir, err := os.MkdirTemp("", "bench-analytics-")
	if err != nil {
		return err
	}
	bin := o.bin
	if bin == "" {
		if bin, err = buildServer(ctx, o.repo, logDir); err != nil {
			return err
		}
		defer os.Remove(bin) // the log stays in logDir
	}
	adm, err := newAdmin(ctx, o.adminURL, o.keep)
	if err != nil {
		return err
	}
	defer adm.close()
	// The base: a database the server migrated and seeded, with the tool's
	// credentials, and nothing measured yet. Every measurement runs in a copy.
	base, err := adm.create(ctx, "base")
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, bin, base.url, o.dbMaxConns, logDir, base.name)
	if err != nil {
		return err
	}
	fx, err := arrange(ctx, base.url, base.name, "http://"+srv.addr)
	if err != nil {
		srv.stop(15 * time.Second)
		return err
	}
	var pgVersion, pgSettings string
	_ = fx.pool.QueryRow(ctx, "SHOW server_version").Scan(&pgVersion)
	// The settings the fold's cost depends on most (docs/performance.md):
	// the per-user index's pages in memory, how often a checkpoint makes the
	// next change of each page write it whole to the WAL, and whether those
	// images are compressed.
	_ = fx.pool.QueryRow(ctx, `SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name)
		FROM pg_settings WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression')`).Scan(&pgSettings)
	// The WAL of each run is read back from its records (databases.go).
	_, err = fx.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_walinspect")
	srv.stop(15 * time.Second)
	fx.pool.Close()
	if err != nil {
		return fmt.Errorf("pg_walinspect (PostgreSQL's contrib modules): %w", err)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bench/analytics  %s UTC\n", start.UTC().Format("2006-01-02 15:04"))
	from := revision(o.repo)
	if o.bin != "" {
		from = "the binary given with -bin (" + o.bin + ")"
	}
	fmt.Printf("command: %s\nserver built from: %s\n", commandLine(), from)
	fmt.Printf("machine: %d CPUs, load average %s at start; PostgreSQL %s (%s); server %s (DB_MAX_CONNECTIONS=%d); logs in %s\n\n",
		runtime.NumCPU(), loadAvg(load), pgVersion, pgSettings, filepath.Base(bin), o.dbMaxConns, logDir)

	rep := &report{}
	b := &bench{o: o, adm: adm, fx: fx, bin: bin, logDir: logDir}
	b.queries = readQueries(fx)
	rep.queries = b.queries
	if !o.skipProduction {
		if err := b.production(ctx, base, rep); err != nil {
			return err
		}
	}
	modes := func(seeded bool) []string {
		var out []string
		for _, m := range strings.Split(o.modes, ",") {
			switch strings.TrimSpace(m) {
			case "copy":
				out = append(out, modeCopy)
			case "ceiling":
				out = append(out, modeCeiling)
			case "gated":
				out = append(out, modeGated)
			case "readers":
				if seeded {
					out = append(out, modeReaders)
				}
			case "fold":
				out = append(out, modeFold)
			}
		}
		return out
	}
	if !o.skipIngest && !o.skipFresh {
		sc := &scenario{name: "2. Fresh environment", tag: "fresh", template: base, fx: fx, rows: o.freshRows, modes: modes(false)}
		if err := b.runScenario(ctx, sc); err != nil {
			return err
		}
		rep.scenarios = append(rep.scenarios, sc)
	}
	if !o.skipIngest && !o.skipSeeded {
		sc := &scenario{name: fmt.Sprintf("3. Environment of %d impressions", o.seedImpressions), tag: "seeded", rows: o.ingestRows, modes: modes(true)}
		if o.seeded == "" {
			if sc.template, sc.idle, err = b.seedTemplate(ctx, base); err != nil {
				return err
			}
			if o.keepSeeded {
				adm.spare = map[string]bool{sc.template.name: true}
			}
			sc.fx = fx
		} else {
			// Credentials of this run in the kept template (its own are
			// stored hashed).
			if sc.template, err = adm.database(ctx, o.seeded); err != nil {
				return fmt.Errorf("database %s: %w", o.seeded, err)
			}
			if sc.fx, err = arrange(ctx, sc.template.url, sc.template.name, ""); err != nil {
				return err
			}
			sc.fx.pool.Close()
			sc.name = "3. Environment of the kept database " + o.seeded
			b.queries = readQueries(sc.fx)
			rep.queries = b.queries
		}
		if err := b.runScenario(ctx, sc); err != nil {
			return err
		}
		rep.scenarios = append(rep.scenarios, sc)
	}
	load, _ = os.ReadFile("/proc/loadavg")
	rep.print(o)
	fmt.Printf("\nload average at the end: %s; total run %s\n", loadAvg(load), time.Since(start).Round(time.Second))
	if len(rep.mismatches) > 0 {
		return fmt.Errorf("%w: %d mismatches (listed above)", errMismatch, len(rep.mismatches))
	}
	return nil
}

// serverEnv is -server-env as a list.
func (o options) serverEnv() []string {
	var out []string
	for _, kv := range strings.Split(o.env, ",") {
		if kv = strings.TrimSpace(kv); kv != "" {
			out = append(out, kv)
		}
	}
	return out
}

// readQueries are the reads timed under load, in the production environment.
func readQueries(fx *fixture) []readQuery {
	const env = "production"
	return []readQuery{
		{"stats", fx.envPath(env) + "/impressions/stats"},
		{"exposure (flag-00, 90 days)", fx.envPath(env) + "/impressions/exposure?flag_key=flag-00&days=90"},
		{"experiment results (flag-00)", fx.envPath(env) + "/experiments/bench/results"},
	}
}

// production runs measurement 1 in a copy of base.
func (b *bench) production(ctx context.Context, base database, rep *report) error {
	d, err := b.adm.clone(ctx, base, "production")
	if err != nil {
		return err
	}
	defer b.adm.drop(ctx, d)
	srv, err := startServer(ctx, b.bin, d.url, b.o.dbMaxConns, b.logDir, d.name)
	if err != nil {
		return err
	}
	defer srv.stop(15 * time.Second)
	fx, err := b.fx.attach(ctx, d, "http://"+srv.addr)
	if err != nil {
		return err
	}
	defer fx.pool.Close()
	return productionShape(ctx, b.o, fx, srv, rep)
}

// revision is the repository's commit, and whether the server's code
// differs from it in the working tree.
func revision(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown commit"
	}
	rev := strings.TrimSpace(string(out))
	diff, _ := exec.Command("git", "-C", repo, "status", "--porcelain", "--", "main.go", "server", "sdkgo", "db", "queries", "migrations", "gen").Output()
	if len(strings.TrimSpace(string(diff))) > 0 {
		rev += " with uncommitted changes under server/, sdkgo/, db/, queries/, migrations/ or gen/"
	}
	return rev
}

func loadAvg(b []byte) string {
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// commandLine is how to rerun this measurement.
func commandLine() string {
	args := os.Args[1:]
	if s := os.Getenv("BENCH_ANALYTICS_COMMAND"); s != "" {
		return s
	}
	return "cd bench/analytics && go run . " + strings.Join(args, " ")
}
