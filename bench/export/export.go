package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// exportRun is one export over HTTP.
type exportRun struct {
	rows            int64
	wire            int64 // bytes received, as encoded
	wall, firstByte time.Duration
	server, pg      time.Duration // CPU
	before, peak    int64         // server resident memory before the run, and its peak during it
	rss             []int64       // resident memory every 100 ms
}

func (r exportRun) rate() float64 { return float64(r.rows) / r.wall.Seconds() }

func (r exportRun) String() string {
	perRow := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(max(r.rows, 1)) }
	return fmt.Sprintf("%d rows in %s = %.0f rows/s; %.0f MB received (%.0f B/row); server CPU %s (%.2f µs/row), PostgreSQL CPU %s (%.2f µs/row); server resident memory %.1f MB before, peak %.1f MB",
		r.rows, r.wall.Round(time.Millisecond), r.rate(), float64(r.wire)/1e6, float64(r.wire)/float64(max(r.rows, 1)),
		r.server.Round(10*time.Millisecond), perRow(r.server), r.pg.Round(10*time.Millisecond), perRow(r.pg),
		mb(r.before), mb(r.peak))
}

// samples lists the resident memory samples, at most 24 evenly spaced.
func (r exportRun) samples() string {
	var out []string
	n := len(r.rss)
	step := max(1, (n+23)/24)
	for i := 0; i < n; i += step {
		out = append(out, fmt.Sprintf("%.0f", mb(r.rss[i])))
	}
	return strings.Join(out, " ")
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// median is the run with the median rate.
func median(runs []exportRun) exportRun {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b exportRun) int {
		switch {
		case a.rate() < b.rate():
			return -1
		case a.rate() > b.rate():
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

// client sends exports without Go's transparent gzip, so that the tool
// chooses the encoding and counts the bytes as sent.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// exportOnce exports production's impressions in [from, to) and counts the
// rows (lines) received.
func exportOnce(ctx context.Context, fx *fixture, srv *server, dbName string, from, to time.Time, gz bool) (exportRun, error) {
	q := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fx.base+"/api/environments/"+fx.envs["production"].String()+"/impressions/export?"+q.Encode(), nil)
	if err != nil {
		return exportRun{}, err
	}
	req.Header.Set("Authorization", "Bearer "+fx.token)
	req.Header.Set("Accept-Encoding", "identity")
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}

	pid := srv.pid()
	var r exportRun
	r.before = memory(pid, "VmRSS")
	if err := resetPeak(pid); err != nil {
		return exportRun{}, fmt.Errorf("reset the server's peak memory: %w", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				r.rss = append(r.rss, memory(pid, "VmRSS"))
			}
		}
	}()
	cpu0, pg0 := cpuTime(pid), postgresCPU(dbName)
	t0 := time.Now()
	err = func() error {
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("export: %d %s", resp.StatusCode, b)
		}
		if got := resp.Header.Get("Content-Encoding"); (got == "gzip") != gz {
			return fmt.Errorf("export: Content-Encoding %q with gzip %v", got, gz)
		}
		wire := &countingReader{r: resp.Body, t0: t0}
		var body io.Reader = wire
		if gz {
			zr, err := gzip.NewReader(wire)
			if err != nil {
				if err == io.EOF { // an empty export is a gzip stream too
					return fmt.Errorf("export: empty gzip body")
				}
				return err
			}
			body = zr
		}
		lines := &lineCounter{}
		if _, err := io.Copy(lines, body); err != nil {
			return fmt.Errorf("export cut off after %d rows: %w", lines.n, err)
		}
		if lines.last != '\n' && lines.n > 0 {
			return fmt.Errorf("export ends without a newline after %d rows", lines.n)
		}
		r.rows, r.wire, r.firstByte = lines.n, wire.n, wire.first
		return nil
	}()
	r.wall = time.Since(t0)
	r.server, r.pg = cpuTime(pid)-cpu0, since(postgresCPU(dbName), pg0)
	r.peak = memory(pid, "VmHWM")
	close(stop)
	wg.Wait()
	return r, err
}

type countingReader struct {
	r     io.Reader
	n     int64
	t0    time.Time
	first time.Duration
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && c.n == 0 {
		c.first = time.Since(c.t0)
	}
	c.n += int64(n)
	return n, err
}

type lineCounter struct {
	n    int64
	last byte
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.n += int64(bytes.Count(p, []byte{'\n'}))
	if len(p) > 0 {
		l.last = p[len(p)-1]
	}
	return len(p), nil
}

// explain prints the plans of an export's queries on the seeded table, as
// the server runs them (and of the exact bounds of the whole range, which
// it skips): the text of queries/export.sql, prepared, with the
// generic plan a prepared statement settles on after its first executions.
func explain(ctx context.Context, fx *fixture, repo string, from, to time.Time, s seeded) error {
	text, err := os.ReadFile(filepath.Join(repo, "queries", "export.sql"))
	if err != nil {
		return err
	}
	conn, err := fx.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	c := conn.Conn()
	if _, err := c.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		return err
	}
	defer func() { _, _ = c.Exec(context.Background(), "RESET plan_cache_mode; DEALLOCATE ALL") }()
	for _, name := range []string{"GetImpressionIDSpan", "GetImpressionExportBounds", "ListImpressionsForExport"} {
		sql, err := namedQuery(string(text), name)
		if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "PREPARE "+name+" AS "+sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("prepare %s: %w", name, err)
		}
	}
	env := fx.envs["production"].String()
	lit := func(t time.Time) string { return "'" + t.Format(time.RFC3339Nano) + "'" }
	var first, last, n int64
	if err := c.QueryRow(ctx, fmt.Sprintf("EXECUTE GetImpressionExportBounds('%s', %s, %s)", env, lit(from), lit(to)),
		pgx.QueryExecModeSimpleProtocol).Scan(&first, &last, &n); err != nil {
		return err
	}
	plans := []struct{ title, stmt string }{
		{"the table's id span (every export: a whole-range export walks it as it is)", "GetImpressionIDSpan"},
		{fmt.Sprintf("bounds of the hour (%d rows, ids %d to %d)", n, first, last),
			fmt.Sprintf("GetImpressionExportBounds('%s', %s, %s)", env, lit(from), lit(to))},
		{"the hour's first batch read",
			fmt.Sprintf("ListImpressionsForExport('%s', %d, %d, %s, %s, 5000)", env, first-1, min(last, first-1+100_000), lit(from), lit(to))},
		{"bounds of the whole range (what a whole-range export does not run)",
			fmt.Sprintf("GetImpressionExportBounds('%s', %s, %s)", env, lit(s.from), lit(s.to))},
		{"a batch read in the middle of the whole range",
			fmt.Sprintf("ListImpressionsForExport('%s', %d, %d, %s, %s, 5000)", env, first-1, first-1+100_000, lit(s.from), lit(s.to))},
	}
	for _, p := range plans {
		rows, err := c.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE "+p.stmt, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return fmt.Errorf("explain %s: %w", p.title, err)
		}
		fmt.Printf("EXPLAIN %s:\n", p.title)
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			fmt.Printf("    %s\n", line)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		fmt.Println()
	}
	return nil
}

var param = regexp.MustCompile(`@([a-z_]+)`)

// namedQuery extracts one query of a sqlc file, its @parameters numbered by
// first appearance as sqlc numbers them.
func namedQuery(file, name string) (string, error) {
	_, rest, ok := strings.Cut(file, "-- name: "+name+" ")
	if !ok {
		return "", fmt.Errorf("query %s not found in queries/export.sql", name)
	}
	_, body, _ := strings.Cut(rest, "\n")
	body, _, _ = strings.Cut(body, "-- name: ")
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	sql := strings.TrimSuffix(strings.TrimSpace(strings.Join(lines, "\n")), ";")
	numbers := map[string]int{}
	return param.ReplaceAllStringFunc(sql, func(m string) string {
		n, ok := numbers[m]
		if !ok {
			n = len(numbers) + 1
			numbers[m] = n
		}
		return fmt.Sprintf("$%d", n)
	}), nil
}
