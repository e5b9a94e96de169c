package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const batchSize = 500

// generator makes the per-evaluation senders' impressions, as bench/ingest
// does: uniformly random flags and users (so almost every impression is a
// new (flag, user): the fold's worst case), booleans for most flags and
// three string variants for every fifth, 3 % anonymous.
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

func (g generator) batch(r *rand.Rand, n int) []impression {
	out := make([]impression, n)
	for i := range out {
		out[i] = g.impression(r)
	}
	return out
}

// readQuery is one of the reads timed under load.
type readQuery struct {
	name, path string
}

// ingestAndReads is measurements 2 and 3 against srv; another starts a
// second server on the same database (for the ceiling of HTTP ingest).
func ingestAndReads(ctx context.Context, o options, fx *fixture, srv *server, another func(name string, env ...string) (*server, error), rep *report) error {
	const env = "production"
	g := generator{flags: 20, users: 250_000, now: time.Now(), spread: 30 * 24 * time.Hour}

	// Seed through the server's own ingest (HTTP, 4 writers) and fold.
	fmt.Printf("== 3. Seeding %d impressions and %d goal events into %s over HTTP (%d writers), then the fold\n",
		o.seedImpressions, o.seedEvents, env, o.writers)
	impURL := fx.envPath(env) + "/impressions"
	t0 := time.Now()
	seeded, err := each(o.writers, (o.seedImpressions+batchSize-1)/batchSize, func(w, i int) error {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		n := min(batchSize, o.seedImpressions-i*batchSize)
		body, err := json.Marshal(g.batch(r, n))
		if err != nil {
			return err
		}
		return fx.call(ctx, fx.keys[env], http.MethodPost, impURL, body, http.StatusNoContent, nil)
	})
	if err != nil {
		return fmt.Errorf("seed impressions: %w", err)
	}
	evSeeded, err := each(o.writers, (o.seedEvents+batchSize-1)/batchSize, func(w, i int) error {
		r := rand.New(rand.NewPCG(uint64(i), 8))
		n := min(batchSize, o.seedEvents-i*batchSize)
		items := make([]map[string]any, n)
		for j := range items {
			items[j] = map[string]any{
				"event_key":   []string{"purchase", "signup"}[r.IntN(2)],
				"user_id":     fmt.Sprintf("user-%06d", r.IntN(g.users)),
				"occurred_at": g.now.Add(-time.Duration(r.Int64N(int64(g.spread)))),
			}
		}
		return fx.call(ctx, fx.keys[env], http.MethodPost, fx.envPath(env)+"/events", items, http.StatusNoContent, nil)
	})
	if err != nil {
		return fmt.Errorf("seed goal events: %w", err)
	}
	t1 := time.Now()
	// The background folder folds the backlog once ingest pauses (a read
	// folded it first before reads stopped waiting on the fold): wait until
	// the watermarks say everything is folded, so the reads below start
	// from the steady state.
	if err := fx.call(ctx, fx.token, http.MethodGet, fx.envPath(env)+"/impressions/stats", nil, http.StatusOK, nil); err != nil {
		return err
	}
	if _, err := fx.waitFolded(ctx, 60*time.Minute); err != nil {
		return err
	}
	folded := time.Since(t1)
	fmt.Printf("seeded impressions in %s (%.0f rows/s), goal events in %s, folded the rest in %s\n",
		seeded.Round(time.Millisecond), float64(o.seedImpressions)/seeded.Seconds(), evSeeded.Round(time.Millisecond), folded.Round(time.Millisecond))
	rep.seedTime, rep.seedFold = time.Since(t0)-folded, folded
	t2 := time.Now()
	if _, err := fx.pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	fmt.Printf("VACUUM ANALYZE in %s\n", time.Since(t2).Round(time.Millisecond))
	if err := fx.call(ctx, fx.token, http.MethodPost, fx.envPath(env)+"/experiments",
		map[string]any{"key": "bench", "name": "bench", "flag_key": "flag-00", "goal_event_key": "purchase"}, http.StatusOK, nil); err != nil {
		return fmt.Errorf("create experiment: %w", err)
	}
	queries := []readQuery{
		{"stats", fx.envPath(env) + "/impressions/stats"},
		{"exposure (flag-00, 90 days)", fx.envPath(env) + "/impressions/exposure?flag_key=flag-00&days=90"},
		{"experiment results (flag-00)", fx.envPath(env) + "/experiments/bench/results"},
	}
	// Idle reads, for reference.
	rep.idle = map[string][]time.Duration{}
	for _, q := range queries {
		for range 5 {
			s := time.Now()
			if err := fx.call(ctx, fx.token, http.MethodGet, q.path, nil, http.StatusOK, nil); err != nil {
				return err
			}
			rep.idle[q.name] = append(rep.idle[q.name], time.Since(s))
		}
	}
	rep.queries = queries
	fmt.Println()

	// The batches of the ingest runs, built before any clock starts: COPY
	// rows (into staging) and JSON bodies (into production) of the same
	// impressions, evaluated within the last minute.
	fmt.Printf("== 2. Per-evaluation senders: %d rows per run, %d-row batches, %d writers\n", o.ingestRows, batchSize, o.writers)
	live := generator{flags: g.flags, users: g.users, now: time.Now(), spread: time.Minute}
	n := o.ingestRows / batchSize
	r := rand.New(rand.NewPCG(4, 1))
	rawRows := make([][][]any, n)
	bodies := make([][]byte, n)
	for i := range n {
		b := live.batch(r, batchSize)
		rawRows[i] = make([][]any, len(b))
		for j, im := range b {
			rawRows[i][j] = []any{fx.envs["staging"], im.FlagKey, im.UserID, im.Value, nil, im.EvaluatedAt}
		}
		if bodies[i], err = json.Marshal(b); err != nil {
			return err
		}
	}
	rows := n * batchSize

	meter := startCPU(0, fx.dbName) // no server: PostgreSQL and this tool
	raw, err := withoutFolding(ctx, fx.pool, func() (time.Duration, error) {
		return each(o.writers, n, func(_, i int) error {
			_, err := fx.pool.CopyFrom(ctx, pgx.Identifier{"impressions"},
				[]string{"environment_id", "flag_key", "user_id", "value", "context", "evaluated_at"}, pgx.CopyFromRows(rawRows[i]))
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("raw copy: %w", err)
	}
	rep.rows, rep.raw, rep.rawCPU = rows, raw, meter.stop()
	fmt.Printf("raw COPY: %s (%.0f rows/s)\n", raw.Round(time.Millisecond), float64(rows)/raw.Seconds())

	if rep.ceiling, err = ingestCeiling(ctx, o, fx, another, bodies); err != nil {
		return err
	}
	fmt.Printf("HTTP with no fold at all (the ceiling): %d rows visible after %s (%.0f rows/s)\n",
		rep.ceiling.rows, rep.ceiling.visible.Round(time.Millisecond), float64(rep.ceiling.rows)/rep.ceiling.visible.Seconds())

	// HTTP alone, then HTTP while readers read.
	for _, withReaders := range []bool{false, true} {
		if _, err := fx.waitFolded(ctx, 30*time.Minute); err != nil {
			return err
		}
		meter := startCPU(srv.pid(), fx.dbName)
		res, err := httpIngest(ctx, o, fx, env, bodies, withReaders, queries)
		if err != nil {
			return err
		}
		res.cpu = meter.stop()
		label := "HTTP alone"
		if withReaders {
			label = fmt.Sprintf("HTTP with %d reader(s)", o.readers)
		}
		fmt.Printf("%s: %d rows acknowledged in %s (%.0f rows/s), visible through GET …/impressions after %s (%.0f rows/s; last read %s)\n",
			label, res.rows, res.acked.Round(time.Millisecond), float64(res.rows)/res.acked.Seconds(), res.visible.Round(time.Millisecond),
			float64(res.rows)/res.visible.Seconds(), res.lastPoll.Round(time.Millisecond))
		fmt.Printf("  unfolded impressions when the last batch was acknowledged: %d\n", res.backlogAtAck)
		if len(res.trace) > 0 {
			fmt.Printf("  reads under load: %s\n", strings.Join(res.trace, "; "))
		}
		if res.overshoot != 0 {
			rep.mismatch(fmt.Sprintf("%s: GET …/impressions total moved by %d, %d rows were sent", label, int64(res.rows)+res.overshoot, res.rows))
		}
		if withReaders {
			rep.loaded = res
		} else {
			rep.alone = res
		}
	}
	fmt.Println()
	return nil
}

// ingestResult is one HTTP ingest run.
type ingestResult struct {
	rows                     int // rows sent
	acked, visible, lastPoll time.Duration
	overshoot                int64
	reads                    map[string][]time.Duration // reads that started before the rows were visible
	trace                    []string                   // every such read: when it began, what, how long
	backlogAtAck             int64                      // impressions not yet folded when the last batch was acknowledged
	cpu                      cpuUse                     // from the first batch until the rows were visible and the reads ended
}

// httpIngest posts the bodies with o.writers writers and polls
// GET …/impressions until its total has grown by the rows sent;
// withReaders runs o.readers readers meanwhile, each cycling through
// queries, and goes on sending the bodies again until o.loadTime has
// passed, so that the reads under load are many.
func httpIngest(ctx context.Context, o options, fx *fixture, env string, bodies [][]byte, withReaders bool, queries []readQuery) (ingestResult, error) {
	var res ingestResult
	listPath := fx.envPath(env) + "/impressions?limit=1"
	total := func() (int64, error) {
		var page struct {
			Total int64 `json:"total"`
		}
		err := fx.call(ctx, fx.token, http.MethodGet, listPath, nil, http.StatusOK, &page)
		return page.Total, err
	}
	base, err := total()
	if err != nil {
		return res, err
	}
	url := fx.envPath(env) + "/impressions"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	res.reads = map[string][]time.Duration{}
	var readErr error
	start := time.Now()
	var visibleAt atomic.Int64 // ns since start; 0 until visible
	if withReaders {
		for k := range o.readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := k; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					q := queries[i%len(queries)]
					s := time.Now()
					err := fx.call(ctx, fx.token, http.MethodGet, q.path, nil, http.StatusOK, nil)
					d := time.Since(s)
					mu.Lock()
					if err != nil && readErr == nil {
						readErr = err
					}
					// Reads that began while the rows were not all visible
					// are the reads under load.
					if v := visibleAt.Load(); v == 0 || s.Sub(start) < time.Duration(v) {
						res.reads[q.name] = append(res.reads[q.name], d)
						res.trace = append(res.trace, fmt.Sprintf("+%.1fs %s %s", s.Sub(start).Seconds(), q.name, ms(d)))
					}
					mu.Unlock()
				}
			}()
		}
	}
	var until time.Time
	if withReaders {
		until = start.Add(o.loadTime)
	}
	var sent atomic.Int64
	res.acked, err = eachUntil(o.writers, len(bodies), until, func(_, i int) error {
		if err := fx.call(ctx, fx.keys[env], http.MethodPost, url, bodies[i%len(bodies)], http.StatusNoContent, nil); err != nil {
			return err
		}
		sent.Add(batchSize)
		return nil
	})
	res.rows = int(sent.Load())
	rows := res.rows
	if imps, _, _, err := fx.backlog(ctx); err == nil {
		res.backlogAtAck = imps
	}
	if err != nil {
		close(stop)
		wg.Wait()
		return res, fmt.Errorf("http ingest: %w", err)
	}
	for {
		s := time.Now()
		got, err := total()
		if err != nil {
			close(stop)
			wg.Wait()
			return res, err
		}
		if got >= base+int64(rows) {
			res.visible = time.Since(start)
			res.lastPoll = time.Since(s)
			res.overshoot = got - base - int64(rows)
			visibleAt.Store(int64(res.visible))
			break
		}
		if time.Since(start) > 30*time.Minute {
			close(stop)
			wg.Wait()
			return res, fmt.Errorf("only %d of %d rows visible after 30 minutes", got-base, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	return res, readErr
}

// ingestCeiling is the HTTP ingest with no fold at all: the same bodies,
// through a second server whose ingest gate is off (INGEST_MAX_UNFOLDED=0),
// into development while folding is held off (withoutFolding), so that
// the server's decoding, the COPY and the database's own indexes share the
// machine with nothing else. It is what HTTP ingest can reach on this
// machine before any folding takes its share (docs/performance.md).
func ingestCeiling(ctx context.Context, o options, fx *fixture, another func(name string, env ...string) (*server, error), bodies [][]byte) (ingestResult, error) {
	if _, err := fx.waitFolded(ctx, 30*time.Minute); err != nil {
		return ingestResult{}, err
	}
	srv, err := another("switchyard-no-gate", "INGEST_MAX_UNFOLDED=0")
	if err != nil {
		return ingestResult{}, err
	}
	defer srv.stop(15 * time.Second)
	direct := *fx
	direct.base = "http://" + srv.addr
	var res ingestResult
	_, err = withoutFolding(ctx, fx.pool, func() (time.Duration, error) {
		meter := startCPU(srv.pid(), fx.dbName)
		var err error
		res, err = httpIngest(ctx, o, &direct, "development", bodies, false, nil)
		res.cpu = meter.stop()
		return res.visible, err
	})
	if err != nil {
		return res, fmt.Errorf("ingest with no fold: %w", err)
	}
	return res, nil
}

// withoutFolding runs the raw baseline with folding held off, and then
// moves the impressions watermark past the rows it wrote: the baseline is
// COPY into the same table with the same indexes and no rollups, so its
// rows are never folded and the folder does not take CPU from it. Every
// row ingested before must have been folded already (waitFolded).
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
	return eachUntil(w, batches, time.Time{}, fn)
}

// eachUntil is each that goes on past batches (i counting up) until the
// time until.
func eachUntil(w, batches int, until time.Time, fn func(worker, i int) error) (time.Duration, error) {
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
				if i >= batches && !time.Now().Before(until) {
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

// quantile is the q-quantile (nearest rank) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
