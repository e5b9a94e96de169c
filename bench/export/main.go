// Command export measures Switchyard's raw export (docs/export.md) against
// the real server (bin/switchyard built from the repository and started as a
// process of its own, so that its memory and CPU are its own) on a scratch
// database of the local PostgreSQL, dropped afterwards:
//
//  1. Seeds -rows impressions into the production environment with COPY,
//     spread over the last 30 days in id order, and one impression of the
//     staging environment after every -other-every of them (rows an export
//     of production walks past and leaves out). The rollups are not built:
//     the export reads raw rows only, so the fold's watermark is moved past
//     the seed instead of folding 5,000,000 rows first.
//  2. Exports the whole range over HTTP, -runs times plain and -runs times
//     gzip-encoded, counting the rows it receives (a short count fails the
//     run), and reports rows/s, bytes, the server's and PostgreSQL's CPU,
//     and the server's peak resident memory (VmHWM, reset before each run)
//     against its resident memory before the run, with samples of it every
//     100 ms through the run (flat memory: the last tenth of the run holds
//     no more than the first).
//  3. Exports one hour from the middle of the range: time to the first byte
//     and to the end, and the plans of the export's queries on the seeded
//     table (EXPLAIN ANALYZE of the table's id span, the hour's bounds, one
//     batch read, with PostgreSQL's generic plan, the one a prepared
//     statement settles on).
//
// Run it with `make bench-export`; docs/performance.md records the figures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

type options struct {
	adminURL   string
	repo       string
	bin        string
	keep       bool
	rows       int
	otherEvery int
	runs       int
	dbMaxConns int
}

// errShort marks an export that delivered fewer rows than the range holds.
var errShort = errors.New("an export delivered the wrong number of rows")

func main() {
	var o options
	flag.StringVar(&o.adminURL, "db", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"PostgreSQL URL of a role that may create databases; a scratch database is created beside it and dropped afterwards")
	flag.StringVar(&o.repo, "repo", "../..", "repository root (the server is built from it)")
	flag.StringVar(&o.bin, "bin", "", "use this switchyard binary instead of building one")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch database")
	flag.IntVar(&o.rows, "rows", 5_000_000, "impressions of the exported environment")
	flag.IntVar(&o.otherEvery, "other-every", 10, "one impression of another environment after every N of the exported one (0: none)")
	flag.IntVar(&o.runs, "runs", 3, "full exports per encoding; the median is reported")
	flag.IntVar(&o.dbMaxConns, "db-max-connections", 10, "the server's DB_MAX_CONNECTIONS")
	flag.Parse()
	if o.rows < 1 || o.runs < 1 || o.otherEvery < 0 {
		log.Fatal("-rows and -runs must be at least 1, -other-every at least 0")
	}
	err := run(context.Background(), o)
	if err != nil {
		if errors.Is(err, errShort) {
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
	logDir, err := os.MkdirTemp("", "bench-export-")
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
	dbURL, dbName, drop, err := scratchDatabase(ctx, o.adminURL, o.keep)
	if err != nil {
		return err
	}
	defer drop()

	// The first start migrates the database and seeds the project; the
	// impressions are copied in while no server runs, so that nothing but
	// the export uses the server the measurements see.
	srv, err := startServer(ctx, bin, dbURL, o.dbMaxConns, logDir, "migrate")
	if err != nil {
		return err
	}
	srv.stop(15 * time.Second)
	fx, err := arrange(ctx, dbURL, dbName)
	if err != nil {
		return err
	}
	defer fx.pool.Close()
	load, _ := os.ReadFile("/proc/loadavg")
	var pgVersion string
	_ = fx.pool.QueryRow(ctx, "SHOW server_version").Scan(&pgVersion)
	fmt.Printf("bench/export  %s UTC\n", start.UTC().Format("2006-01-02 15:04"))
	fmt.Printf("command: %s\nserver built from: %s\n", commandLine(), revision(o.repo))
	fmt.Printf("machine: %d CPUs, load average %s at start; PostgreSQL %s; logs in %s\n\n",
		runtime.NumCPU(), loadAvg(load), pgVersion, logDir)

	seeded, err := seed(ctx, fx, o)
	if err != nil {
		return err
	}
	fmt.Printf("seed: %d impressions of production and %d of staging by COPY, %d secondary indexes rebuilt after it, in %s; VACUUM ANALYZE in %s; table %s\n\n",
		seeded.rows, seeded.other, seeded.indexes, seeded.copyTime.Round(time.Millisecond),
		seeded.vacuumTime.Round(time.Millisecond), seeded.tableSize)

	if srv, err = startServer(ctx, bin, dbURL, o.dbMaxConns, logDir, "switchyard"); err != nil {
		return err
	}
	defer srv.stop(15 * time.Second)
	fx.base = "http://" + srv.addr

	var failed error
	for _, gz := range []bool{false, true} {
		var results []exportRun
		for i := range o.runs {
			r, err := exportOnce(ctx, fx, srv, dbName, seeded.from, seeded.to, gz)
			if err != nil {
				return err
			}
			if r.rows != int64(seeded.rows) {
				failed = fmt.Errorf("%w: %d rows, want %d", errShort, r.rows, seeded.rows)
			}
			load, _ := os.ReadFile("/proc/loadavg")
			fmt.Printf("run %d, %s: %s (load average %s)\n", i+1, encodingName(gz), r, loadAvg(load))
			results = append(results, r)
		}
		m := median(results)
		fmt.Printf("median, %s: %s\n", encodingName(gz), m)
		fmt.Printf("  server resident memory through the median run (MB, every 100 ms): %s\n\n", m.samples())
	}

	hour := seeded.from.Add(seeded.to.Sub(seeded.from) / 2).Truncate(time.Hour)
	r, err := exportOnce(ctx, fx, srv, dbName, hour, hour.Add(time.Hour), false)
	if err != nil {
		return err
	}
	fmt.Printf("one hour (%s to %s): %d rows, first byte after %s, done after %s\n\n",
		hour.Format(time.RFC3339), hour.Add(time.Hour).Format(time.RFC3339), r.rows, r.firstByte.Round(time.Millisecond), r.wall.Round(time.Millisecond))
	if err := explain(ctx, fx, o.repo, hour, hour.Add(time.Hour), seeded); err != nil {
		return err
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at the end: %s; total run %s; server log %s\n", loadAvg(load), time.Since(start).Round(time.Second), filepath.Join(logDir, "switchyard.log"))
	return failed
}

func encodingName(gz bool) string {
	if gz {
		return "gzip"
	}
	return "plain"
}
