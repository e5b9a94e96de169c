// Command ascode measures flags as code (docs/performance.md, "Flags as
// code"): a file of -flags flags in each of a project's three environments,
// with segments, rules, splits and prerequisites, applied to an in-process
// server on a scratch database through the command line itself. It times
// validate (no server), apply creating everything, diff against the server
// holding it, a second apply (which must write nothing: the flags' versions
// and the audit trail stay as they were), and diff and apply after -changed
// flags were changed in each environment.
//
// Usage: go run . -db postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/bench/benchenv"
	"github.com/switchyard/switchyard/cli"
)

const (
	dbName = "switchyard_bench_ascode"
	secret = "bench-ascode-secret-of-at-least-32-characters"
)

func main() {
	adminURL := flag.String("db", os.Getenv("TEST_DATABASE_URL"), "a PostgreSQL URL of a role that may create databases")
	flags := flag.Int("flags", 1000, "flags in each of the three environments")
	changed := flag.Int("changed", 10, "flags changed in each environment before the last diff and apply")
	runs := flag.Int("runs", 5, "runs of each read-only command (the median is reported)")
	flag.Parse()
	if *adminURL == "" {
		fmt.Fprintln(os.Stderr, "give -db or TEST_DATABASE_URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := run(ctx, *adminURL, *flags, *changed, *runs)
	cancel()
	err = errors.Join(err, benchenv.DropDatabase(context.Background(), *adminURL, dbName))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ascode:", err)
		os.Exit(1)
	}
}

// file is the project's file: per environment, 20 segments and n flags of
// every type, a third with a segment rule and a rule of two conditions,
// every tenth with a weighted split, every fifth after a prerequisite;
// change(i) tells which flags get another rollout.
func file(n int, change func(env, i int) bool) string {
	var b strings.Builder
	b.WriteString("version: 1\nprojects:\n  - slug: bench\n    name: Bench\n    environments:\n")
	for e, env := range []string{"production", "staging", "development"} {
		fmt.Fprintf(&b, "      - slug: %s\n        segments:\n", env)
		for s := 0; s < 20; s++ {
			fmt.Fprintf(&b, "          - {key: segment-%d, name: Segment %d, rules: [{attribute: email, operator: ends_with, values: [\"@team%d.example\"]}]}\n", s, s, s)
		}
		b.WriteString("        flags:\n")
		for i := 0; i < n; i++ {
			rollout := i % 100
			if change(e, i) {
				rollout = (rollout + 1) % 100
			}
			fmt.Fprintf(&b, "          - key: flag-%04d\n            is_enabled: %t\n            rollout_percentage: %d\n            tags: [team-%d]\n", i, i%2 == 0, rollout, i%7)
			switch {
			case i%10 == 0:
				fmt.Fprintf(&b, "            flag_type: string\n            default_value: control\n            variants: [{weight: 1, value: a}, {weight: 1, value: b}]\n")
			case i%3 == 0:
				fmt.Fprintf(&b, "            rules:\n              - {segment_key: segment-%d}\n              - attribute: plan\n                operator: equals\n                values: [pro, enterprise]\n                conditions: [{attribute: app_version, operator: semver_greater_than_or_equal, values: [\"2.%d.0\"]}]\n", i%20, i%5)
			}
			if i%5 == 4 {
				fmt.Fprintf(&b, "            prerequisites: [{flag_key: flag-%04d}]\n", i-1)
			}
		}
	}
	return b.String()
}

func run(ctx context.Context, adminURL string, n, changed, runs int) error {
	dbURL, err := benchenv.FreshDatabase(ctx, adminURL, dbName)
	if err != nil {
		return err
	}
	base, err := benchenv.StartApp(ctx, benchenv.Settings(dbURL, "", secret))
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	token, err := benchenv.AdminToken(ctx, pool, benchenv.Admin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-ascode")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	first := filepath.Join(dir, "flags.yaml")
	second := filepath.Join(dir, "changed.yaml")
	if err := os.WriteFile(first, []byte(file(n, func(int, int) bool { return false })), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(second, []byte(file(n, func(_, i int) bool { return i%(n/changed) == 0 })), 0o600); err != nil {
		return err
	}
	info, _ := os.Stat(first)
	fmt.Printf("file: %d flags and 20 segments in each of 3 environments, %d lines, %.1f MB\n",
		n, strings.Count(file(n, func(int, int) bool { return false }), "\n"), float64(info.Size())/1e6)

	server := map[string]string{"SWITCHYARD_URL": base, "SWITCHYARD_TOKEN": token}
	offline := map[string]string{"SWITCHYARD_URL": "http://127.0.0.1:1"}
	command := func(env map[string]string, want int, args ...string) (time.Duration, string, error) {
		var out, errOut bytes.Buffer
		start := time.Now()
		code := cli.Run(ctx, args, func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			strings.NewReader(""), &out, &errOut, func(context.Context) error { return errors.New("serve") })
		took := time.Since(start)
		if code != want {
			return took, "", fmt.Errorf("%q = %d, want %d\n%.2000s%s", args, code, want, out.String(), errOut.String())
		}
		return took, out.String(), nil
	}
	median := func(env map[string]string, want int, args ...string) (time.Duration, error) {
		var ds []time.Duration
		for i := 0; i < runs; i++ {
			d, _, err := command(env, want, args...)
			if err != nil {
				return 0, err
			}
			ds = append(ds, d)
		}
		slices.Sort(ds)
		return ds[len(ds)/2], nil
	}
	writes := func() (int64, int64, error) {
		var versions, audit int64
		if err := pool.QueryRow(ctx, `SELECT coalesce(sum(version), 0) FROM flags`).Scan(&versions); err != nil {
			return 0, 0, err
		}
		err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM audit_entries) + (SELECT count(*) FROM audit_trail)`).Scan(&audit)
		return versions, audit, err
	}

	d, err := median(offline, cli.ExitOK, "validate", "-f", first)
	if err != nil {
		return err
	}
	fmt.Printf("validate (no server), median of %d: %v\n", runs, d.Round(time.Millisecond))
	d, _, err = command(server, cli.ExitChanges, "diff", "-f", first)
	if err != nil {
		return err
	}
	fmt.Printf("diff against a server without them: %v\n", d.Round(time.Millisecond))
	d, out, err := command(server, cli.ExitOK, "apply", "-f", first, "--yes")
	if err != nil {
		return err
	}
	fmt.Printf("apply creating %d flags and 60 segments: %v (%d writes)\n", 3*n, d.Round(time.Millisecond), strings.Count(out, "\n"))
	d, err = median(server, cli.ExitOK, "diff", "-f", first)
	if err != nil {
		return err
	}
	fmt.Printf("diff against the server holding them, median of %d: %v\n", runs, d.Round(time.Millisecond))
	v0, a0, err := writes()
	if err != nil {
		return err
	}
	d, out, err = command(server, cli.ExitOK, "apply", "-f", first, "--yes")
	if err != nil {
		return err
	}
	v1, a1, err := writes()
	if err != nil {
		return err
	}
	if v1 != v0 || a1 != a0 || !strings.Contains(out, "No changes") {
		return fmt.Errorf("the second apply wrote: versions %d → %d, audit entries %d → %d\n%s", v0, v1, a0, a1, out)
	}
	fmt.Printf("second apply: %v, no write (flag versions and audit trail unchanged)\n", d.Round(time.Millisecond))
	d, _, err = command(server, cli.ExitChanges, "diff", "-f", second)
	if err != nil {
		return err
	}
	fmt.Printf("diff with %d flags changed in each environment: %v\n", changed, d.Round(time.Millisecond))
	d, out, err = command(server, cli.ExitOK, "apply", "-f", second, "--yes")
	if err != nil {
		return err
	}
	fmt.Printf("apply of those changes: %v (%d writes)\n", d.Round(time.Millisecond), strings.Count(out, "\n"))
	return nil
}
