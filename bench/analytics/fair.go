package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Measurements 2 and 3 compare, per starting state (a scenario), raw COPY,
// HTTP ingest with no fold at all, and HTTP ingest through the gate, each
// into the production environment of its own fresh copy of the same template
// (databases.go), in an order that rotates between rounds so that no mode
// always runs first or last; every figure is the median of the rounds. The
// fold alone is measured the same way: the rows copied raw into a fresh copy
// with no server running, then folded by a server started on it.

// Ingest modes.
const (
	modeCopy    = "raw pgx COPY"
	modeCeiling = "HTTP, no fold (ceiling)"
	modeGated   = "HTTP, gated, visible"
	modeReaders = "HTTP, gated, with reader(s)"
	modeFold    = "the fold alone"
)

// scenario is one starting state, measured in every mode.
type scenario struct {
	name     string // as printed
	tag      string // in database names
	template database
	fx       *fixture // arranged in the template (or the database it was copied from)
	rows     int      // per run (-ingest-rows or -fresh-rows)
	modes    []string
	idle     map[string][]time.Duration // reads before any ingest (with readers)
	results  map[string][]runResult     // mode -> one per round
}

// runResult is one run of one mode.
type runResult struct {
	rows         int
	wall         time.Duration // COPY: its time; HTTP: until visible; the fold: until folded
	acked        time.Duration // HTTP: until the last batch was acknowledged
	cpu          cpuUse
	wal          walUse
	reads        map[string][]time.Duration
	backlogAtAck int64
	load         string
}

func (r runResult) rate() float64 { return float64(r.rows) / r.wall.Seconds() }

// ingestData is the impressions every run of a scenario sends: COPY rows
// and JSON bodies of the same batches, built before any clock starts.
type ingestData struct {
	raw    [][][]any
	bodies [][]byte
}

func newIngestData(fx *fixture, g generator, rows int, seed uint64) (ingestData, error) {
	n := rows / batchSize
	r := rand.New(rand.NewPCG(seed, 1))
	d := ingestData{raw: make([][][]any, n), bodies: make([][]byte, n)}
	for i := range n {
		b := g.batch(r, batchSize)
		d.raw[i] = make([][]any, len(b))
		for j, im := range b {
			d.raw[i][j] = []any{copyUUID(fx.envs["production"]), im.FlagKey, im.UserID, im.Value, nil, im.EvaluatedAt}
		}
		var err error
		if d.bodies[i], err = json.Marshal(b); err != nil {
			return d, err
		}
	}
	return d, nil
}

// bench holds what every run needs.
type bench struct {
	o       options
	adm     *admin
	fx      *fixture // arranged in the base database; attach it to a copy
	bin     string
	logDir  string
	queries []readQuery
}

// runScenario runs every mode of sc -runs times.
func (b *bench) runScenario(ctx context.Context, sc *scenario) error {
	live := generator{flags: 20, users: 250_000, now: time.Now(), spread: time.Minute}
	data, err := newIngestData(sc.fx, live, sc.rows, 4)
	if err != nil {
		return err
	}
	sc.results = map[string][]runResult{}
	fmt.Printf("== %s: %d rows per run, %d-row batches, %d writers; modes %s; %d rounds, each mode in a fresh copy of the same template\n",
		sc.name, len(data.raw)*batchSize, batchSize, b.o.writers, strings.Join(sc.modes, ", "), b.o.runs)
	for round := range b.o.runs {
		for k := range sc.modes {
			mode := sc.modes[(k+round)%len(sc.modes)]
			res, err := b.runMode(ctx, sc, data, mode, round)
			if err != nil {
				return fmt.Errorf("%s, round %d, %s: %w", sc.name, round+1, mode, err)
			}
			sc.results[mode] = append(sc.results[mode], res)
			c := res.cpu
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 / float64(res.rows) }
			fmt.Printf("  round %d  %-28s %8d rows %9.0f rows/s  %9s  CPU µs/row server %5.1f PostgreSQL %6.1f tool %4.1f  WAL/row %6.0f B (%5.0f B page images)  load %s\n",
				round+1, mode, res.rows, res.rate(), res.wall.Round(time.Millisecond), per(c.server), per(c.postgres), per(c.tool),
				float64(res.wal.bytes)/float64(res.rows), float64(res.wal.fpiBytes)/float64(res.rows), res.load)
		}
	}
	fmt.Println()
	return nil
}

// runMode runs mode once in a fresh copy of the scenario's template.
func (b *bench) runMode(ctx context.Context, sc *scenario, data ingestData, mode string, round int) (runResult, error) {
	short := map[string]string{modeCopy: "copy", modeCeiling: "ceil", modeGated: "gate", modeReaders: "read", modeFold: "fold"}[mode]
	d, err := b.adm.clone(ctx, sc.template, fmt.Sprintf("%s_%d_%s", sc.tag, round+1, short))
	if err != nil {
		return runResult{}, err
	}
	defer b.adm.drop(ctx, d)
	res := runResult{}
	switch mode {
	case modeCopy:
		fx, err := sc.fx.attach(ctx, d, "")
		if err != nil {
			return res, err
		}
		defer fx.pool.Close()
		wal, err := b.adm.startWAL(ctx, d)
		if err != nil {
			return res, err
		}
		meter := startCPU(0, d.name)
		res.wall, err = copyRows(ctx, fx, b.o.writers, data.raw)
		res.cpu = meter.stop()
		res.rows = len(data.raw) * batchSize
		if err != nil {
			return res, err
		}
		res.wal, err = wal.stop(ctx, fx.pool)
	case modeFold:
		fx, err := sc.fx.attach(ctx, d, "")
		if err != nil {
			return res, err
		}
		defer fx.pool.Close()
		if _, err := copyRows(ctx, fx, b.o.writers, data.raw); err != nil {
			return res, err
		}
		res.rows = len(data.raw) * batchSize
		wal, err := b.adm.startWAL(ctx, d)
		if err != nil {
			return res, err
		}
		start := time.Now()
		srv, err := startServer(ctx, b.bin, d.url, b.o.dbMaxConns, b.logDir, d.name, b.o.serverEnv()...)
		if err != nil {
			return res, err
		}
		defer srv.stop(15 * time.Second)
		// The server's backends are new and count whole; the server's own
		// start-up before this is a few milliseconds.
		meter := startCPU(srv.pid(), d.name)
		if _, err := fx.waitFolded(ctx, 60*time.Minute); err != nil {
			return res, err
		}
		res.wall = time.Since(start)
		res.cpu = meter.stop()
		res.wal, err = wal.stop(ctx, fx.pool)
		if err != nil {
			return res, err
		}
	default:
		env := b.o.serverEnv()
		if mode == modeCeiling {
			env = append(env, "INGEST_MAX_UNFOLDED=0")
		}
		srv, err := startServer(ctx, b.bin, d.url, b.o.dbMaxConns, b.logDir, d.name, env...)
		if err != nil {
			return res, err
		}
		defer srv.stop(15 * time.Second)
		fx, err := sc.fx.attach(ctx, d, "http://"+srv.addr)
		if err != nil {
			return res, err
		}
		defer fx.pool.Close()
		if mode == modeCeiling {
			// Folders lock the watermark row first (server/measure/rollups.go):
			// holding it holds every fold off for the run.
			tx, err := fx.pool.Begin(ctx)
			if err != nil {
				return res, err
			}
			defer tx.Rollback(context.WithoutCancel(ctx))
			if _, err := tx.Exec(ctx, `SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions' FOR UPDATE`); err != nil {
				return res, err
			}
		}
		wal, err := b.adm.startWAL(ctx, d)
		if err != nil {
			return res, err
		}
		meter := startCPU(srv.pid(), d.name)
		ir, err := httpIngest(ctx, b.o, fx, "production", data.bodies, mode == modeReaders, b.queries)
		res.cpu = meter.stop()
		if err != nil {
			return res, err
		}
		if ir.overshoot != 0 {
			return res, fmt.Errorf("%w: GET …/impressions total moved by %d, %d rows were sent", errMismatch, int64(ir.rows)+ir.overshoot, ir.rows)
		}
		res.rows, res.wall, res.acked, res.reads, res.backlogAtAck = ir.rows, ir.visible, ir.acked, ir.reads, ir.backlogAtAck
		res.wal, err = wal.stop(ctx, fx.pool)
		if err != nil {
			return res, err
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	res.load = loadAvg(load)
	return res, err
}

// copyRows copies the batches with w writers, as the raw baseline does.
func copyRows(ctx context.Context, fx *fixture, w int, batches [][][]any) (time.Duration, error) {
	return each(w, len(batches), func(_, i int) error {
		_, err := fx.pool.CopyFrom(ctx, pgx.Identifier{"impressions"},
			[]string{"environment_id", "flag_key", "user_id", "value", "context", "evaluated_at"}, pgx.CopyFromRows(batches[i]))
		return err
	})
}

// seedTemplate makes the 5,000,000-impression template: a copy of base,
// seeded through the server's own ingest (HTTP, the writers) and fold, with
// an experiment on flag-00, vacuumed and analysed. It returns the idle
// reads measured on it.
func (b *bench) seedTemplate(ctx context.Context, base database) (database, map[string][]time.Duration, error) {
	o := b.o
	d, err := b.adm.clone(ctx, base, "seeded")
	if err != nil {
		return d, nil, err
	}
	// The rows are copied raw and then folded by the server, which ends
	// where seeding through HTTP ends (ingest waits for the same fold), in
	// less time.
	raw, err := b.fx.attach(ctx, d, "")
	if err != nil {
		return d, nil, err
	}
	const env = "production"
	g := generator{flags: 20, users: 250_000, now: time.Now(), spread: 30 * 24 * time.Hour}
	fmt.Printf("== Seeding %d impressions and %d goal events into %s (COPY, %d writers), then the server's fold\n",
		o.seedImpressions, o.seedEvents, env, o.writers)
	seeded, err := each(o.writers, (o.seedImpressions+batchSize-1)/batchSize, func(w, i int) error {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		batch := g.batch(r, min(batchSize, o.seedImpressions-i*batchSize))
		rows := make([][]any, len(batch))
		for j, im := range batch {
			rows[j] = []any{copyUUID(raw.envs[env]), im.FlagKey, im.UserID, im.Value, nil, im.EvaluatedAt}
		}
		_, err := raw.pool.CopyFrom(ctx, pgx.Identifier{"impressions"},
			[]string{"environment_id", "flag_key", "user_id", "value", "context", "evaluated_at"}, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		raw.pool.Close()
		return d, nil, fmt.Errorf("seed impressions: %w", err)
	}
	_, err = each(o.writers, (o.seedEvents+batchSize-1)/batchSize, func(w, i int) error {
		r := rand.New(rand.NewPCG(uint64(i), 8))
		rows := make([][]any, min(batchSize, o.seedEvents-i*batchSize))
		for j := range rows {
			at := g.now.Add(-time.Duration(r.Int64N(int64(g.spread))))
			rows[j] = []any{copyUUID(raw.envs[env]), []string{"purchase", "signup"}[r.IntN(2)], fmt.Sprintf("user-%06d", r.IntN(g.users)), at, at}
		}
		_, err := raw.pool.CopyFrom(ctx, pgx.Identifier{"goal_events"},
			[]string{"environment_id", "event_key", "user_id", "occurred_at", "received_at"}, pgx.CopyFromRows(rows))
		return err
	})
	raw.pool.Close()
	if err != nil {
		return d, nil, fmt.Errorf("seed goal events: %w", err)
	}
	srv, err := startServer(ctx, b.bin, d.url, o.dbMaxConns, b.logDir, d.name)
	if err != nil {
		return d, nil, err
	}
	defer srv.stop(15 * time.Second)
	fx, err := b.fx.attach(ctx, d, "http://"+srv.addr)
	if err != nil {
		return d, nil, err
	}
	defer fx.pool.Close()
	folded, err := fx.waitFolded(ctx, 120*time.Minute)
	if err != nil {
		return d, nil, err
	}
	fmt.Printf("copied the impressions in %s, folded everything in %s (%.0f rows/s)\n",
		seeded.Round(time.Millisecond), folded.Round(time.Millisecond), float64(o.seedImpressions+o.seedEvents)/folded.Seconds())
	t2 := time.Now()
	if _, err := fx.pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return d, nil, err
	}
	fmt.Printf("VACUUM ANALYZE in %s\n", time.Since(t2).Round(time.Millisecond))
	if err := fx.call(ctx, fx.token, http.MethodPost, fx.envPath(env)+"/experiments",
		map[string]any{"key": "bench", "name": "bench", "flag_key": "flag-00", "goal_event_key": "purchase"}, http.StatusOK, nil); err != nil {
		return d, nil, fmt.Errorf("create experiment: %w", err)
	}
	idle := map[string][]time.Duration{}
	for _, q := range b.queries {
		for range 5 {
			s := time.Now()
			if err := fx.call(ctx, fx.token, http.MethodGet, q.path, nil, http.StatusOK, nil); err != nil {
				return d, nil, err
			}
			idle[q.name] = append(idle[q.name], time.Since(s))
		}
	}
	var sizes string
	_ = fx.pool.QueryRow(ctx, `SELECT string_agg(relname || ' ' || pg_size_pretty(pg_relation_size(oid)), ', ' ORDER BY pg_relation_size(oid) DESC)
		FROM (SELECT oid, relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'i')
		      ORDER BY pg_relation_size(oid) DESC LIMIT 12) s`).Scan(&sizes)
	fmt.Printf("largest relations: %s\n\n", sizes)
	return d, idle, nil
}

// median is the median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// each figure of a mode's rounds.
func figures(rs []runResult, f func(runResult) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func spread(xs []float64) string {
	if len(xs) == 0 {
		return ""
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return fmt.Sprintf("%.0f–%.0f", s[0], s[len(s)-1])
}

// print prints the scenario's medians.
func (sc *scenario) print(o options, queries []readQuery) {
	copies := sc.results[modeCopy]
	fmt.Printf("%s: %d rows per run, %d writers of %d-item batches; medians of %d rounds (each in a fresh copy of the same template)\n",
		sc.name, sc.rows, o.writers, batchSize, len(copies))
	fmt.Printf("   %-28s %9s %13s %8s %8s %10s %6s %9s %10s %6s\n", "", "rows/s", "(range)", "of COPY", "server", "PostgreSQL", "tool", "WAL B/row", "page img.", "busy")
	ratioOf := func(round int, r runResult) float64 {
		if round >= len(copies) {
			return 0
		}
		return r.rate() / copies[round].rate()
	}
	for _, mode := range []string{modeCopy, modeCeiling, modeGated, modeReaders, modeFold} {
		rs := sc.results[mode]
		if len(rs) == 0 {
			continue
		}
		var ratios []float64
		for i, r := range rs {
			ratios = append(ratios, ratioOf(i, r))
		}
		per := func(f func(cpuUse) time.Duration) float64 {
			return median(figures(rs, func(r runResult) float64 { return float64(f(r.cpu).Nanoseconds()) / 1000 / float64(r.rows) }))
		}
		busy := median(figures(rs, func(r runResult) float64 {
			return 100 * (r.cpu.server + r.cpu.postgres + r.cpu.tool).Seconds() / r.cpu.wall.Seconds() / 2
		}))
		rates := figures(rs, runResult.rate)
		fmt.Printf("   %-28s %9.0f %13s %7.0f%% %8.1f %10.1f %6.1f %9.0f %10.0f %5.0f%%\n", mode, median(rates), spread(rates),
			100*median(ratios), per(func(c cpuUse) time.Duration { return c.server }), per(func(c cpuUse) time.Duration { return c.postgres }),
			per(func(c cpuUse) time.Duration { return c.tool }),
			median(figures(rs, func(r runResult) float64 { return float64(r.wal.bytes) / float64(r.rows) })),
			median(figures(rs, func(r runResult) float64 { return float64(r.wal.fpiBytes) / float64(r.rows) })), busy)
	}
	fmt.Println("   (rows/s: HTTP until visible in GET …/impressions total, the fold until the watermark reached the rows; CPU in µs per row,\n    user+system, of the server, of the scratch database's backends and of this tool; WAL: bytes of the database's own\n    records (pg_walinspect), and of their full-page images; busy: CPU over the wall time of both cores; the\n    ratio to COPY is that of each round, then the median)")
	if rs := sc.results[modeReaders]; len(rs) > 0 {
		fmt.Printf("   reads under load (%s; idle p50 before any ingest; p50/p99 per round, median of the rounds):\n", modeReaders)
		fmt.Printf("   %-32s %10s %6s %10s %10s %10s %12s\n", "query", "idle p50", "reads", "p50", "p99", "max", "p99 < 1 s")
		for _, q := range queries {
			var n int
			var p50, p99 []float64
			var worst time.Duration
			for _, r := range rs {
				ds := r.reads[q.name]
				n += len(ds)
				p50 = append(p50, float64(quantile(ds, 0.5)))
				p99 = append(p99, float64(quantile(ds, 0.99)))
				worst = max(worst, quantile(ds, 1))
			}
			m99 := time.Duration(median(p99))
			fmt.Printf("   %-32s %10s %6d %10s %10s %10s %12s\n", q.name, ms(quantile(sc.idle[q.name], 0.5)), n,
				ms(time.Duration(median(p50))), ms(m99), ms(worst), mark(n > 0 && m99 < time.Second))
		}
	}
	fmt.Println()
}

// copyUUID gives raw COPY an environment id pgx encodes as its 16 bytes, as
// the server's pool does (server/store/uuid.go): a bare uuid.UUID would take
// pgx's slower text fallback, which no tuned client pays.
func copyUUID(u uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: u, Valid: true} }
