package release_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spaolacci/murmur3"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/release"
	"github.com/switchyard/switchyard/server/store"
)

// The sizes of BenchmarkReleaseCheck. The defaults finish in seconds; the
// figures in docs/performance.md (Release checks) use the full sizes.
var (
	benchUsers  = flag.String("release-users", "20000", "BenchmarkReleaseCheck: comma-separated numbers of users exposed before the first check, a fresh database each")
	benchNew    = flag.String("release-new", "1000", "BenchmarkReleaseCheck: comma-separated numbers of new users exposed between two checks, one sub-benchmark each")
	benchIngest = flag.Int("release-ingest", 5000, "BenchmarkReleaseCheck: impressions per second the concurrent ingest writes into another flag of the environment (0: none)")
)

// Goal events per exposed user (200,000 for 1,000,000 users), spread over
// the release's three metrics.
const eventsPerUser = 0.2

const (
	benchFlag    = "checkout"
	benchOther   = "search-ranking" // the concurrent ingest's flag
	benchPercent = 50
	benchLoadFor = time.Hour        // the exposures before the first check span this
	benchEvery   = 60 * time.Second // the check interval
)

var benchMetrics = []release.Metric{
	{EventKey: "purchase", Kind: release.KindConversion, BadDirection: release.BadDecrease, Tolerance: 0.5},
	{EventKey: "revenue", Kind: release.KindMean, BadDirection: release.BadDecrease, Tolerance: 0.5},
	{EventKey: "error", Kind: release.KindConversion, BadDirection: release.BadIncrease, Tolerance: 0.5},
}

// BenchmarkReleaseCheck measures one guarded release's check
// (Service.RunReleaseCheck) as its users grow. For each -release-users size
// it loads that many users' first impressions and a fifth as many goal
// events with COPY into a fresh database, runs the first check (which folds
// all of them, logged as "cold"), then one sub-benchmark per -release-new
// size: each iteration ingests that many new users' impressions, as many
// repeat impressions of known users (one in a hundred earlier than the
// exposure the release knows, which moves the user) and a fifth as many
// goal events, then times one check. A goroutine meanwhile writes
// -release-ingest impressions a second into another flag of the
// environment through the ingest's transaction (shared ingest lock, COPY),
// which the check's ingest barrier waits for. p50-ms and p99-ms are over
// the iterations; run with -benchtime 20x for 20 checks. At the end the
// incremental sums are compared with a recount from the raw rows.
func BenchmarkReleaseCheck(b *testing.B) {
	for _, users := range intList(b, *benchUsers) {
		b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) {
			h := newCheckHarness(b, users)
			for _, n := range intList(b, *benchNew) {
				b.Run(fmt.Sprintf("new=%d", n), func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						b.StopTimer()
						h.ingestInterval(b, n)
						b.StartTimer()
						took = append(took, h.check(b))
					}
					b.StopTimer()
					b.ReportMetric(ms(percentile(took, 0.50)), "p50-ms")
					b.ReportMetric(ms(percentile(took, 0.99)), "p99-ms")
					b.ReportMetric(float64(h.total), "users")
					b.Logf("checks in order, ms: %v", inMs(took))
					b.Logf("time by statement: %s", h.spent.take())
				})
			}
			h.stopIngest(b)
			h.verify(b)
		})
	}
}

// TestReleaseFoldMatchesRecount runs a small release through the checks
// the benchmark runs and compares its incremental sums with a recount.
func TestReleaseFoldMatchesRecount(t *testing.T) {
	h := newCheckHarness(t, 2_000)
	for range 5 {
		h.ingestInterval(t, 300)
		h.check(t)
	}
	h.stopIngest(t)
	h.verify(t)
}

// checkHarness is a database with a running release of benchFlag, a clock
// the test moves, and the concurrent ingest.
type checkHarness struct {
	ctx   context.Context
	pool  *pgxpool.Pool
	svc   *release.Service
	env   uuid.UUID
	rel   release.Release
	rng   *rand.Rand
	clock atomic.Pointer[time.Time]
	start time.Time // the release's start
	total int       // users exposed so far: user-0 ... user-(total-1)

	stop    context.CancelFunc
	done    sync.WaitGroup
	written atomic.Int64
	ingErr  atomic.Pointer[error]
	began   time.Time

	spent *queryTimes
}

// queryTimes adds up the time of each named query (sqlc's "-- name: X")
// run under a check's context.
type queryTimes struct {
	mu sync.Mutex
	d  map[string]time.Duration
}

type checking struct{}

type queryStart struct {
	name  string
	began time.Time
}

func (t *queryTimes) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	name, ok := strings.CutPrefix(data.SQL, "-- name: ")
	if !ok || ctx.Value(checking{}) == nil {
		return ctx
	}
	name, _, _ = strings.Cut(name, " ")
	return context.WithValue(ctx, queryStart{}, queryStart{name, time.Now()})
}

func (t *queryTimes) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if s, ok := ctx.Value(queryStart{}).(queryStart); ok {
		t.mu.Lock()
		t.d[s.name] += time.Since(s.began)
		t.mu.Unlock()
	}
}

// take returns the slowest queries' shares since the last take, and
// forgets them.
func (t *queryTimes) take() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := slices.Collect(maps.Keys(t.d))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(t.d[b], t.d[a]) })
	var out []string
	for _, n := range names[:min(6, len(names))] {
		out = append(out, fmt.Sprintf("%s %v", n, t.d[n].Round(time.Millisecond)))
	}
	clear(t.d)
	return strings.Join(out, ", ")
}

func newCheckHarness(tb testing.TB, users int) *checkHarness {
	tb.Helper()
	ctx := tb.Context()
	h := &checkHarness{ctx: ctx, rng: rand.New(rand.NewPCG(1, uint64(users))), spent: &queryTimes{d: map[string]time.Duration{}}}
	cfg, err := pgxpool.ParseConfig(testenv.DatabaseURL(tb))
	must(tb, err)
	cfg.ConnConfig.Tracer = h.spent
	h.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	must(tb, err)
	tb.Cleanup(h.pool.Close)
	h.start = time.Now().UTC().Truncate(time.Second)
	h.setClock(h.start)
	h.svc = release.New(h.pool, release.Config{Now: func() time.Time { return *h.clock.Load() }})

	var project uuid.UUID
	must(tb, h.pool.QueryRow(ctx, `INSERT INTO projects (name, slug) VALUES ('Bench', 'bench') RETURNING id`).Scan(&project))
	must(tb, h.pool.QueryRow(ctx, `INSERT INTO environments (project_id, name, slug, is_default)
		VALUES ($1, 'Production', 'production', true) RETURNING id`, project).Scan(&h.env))
	_, err = h.pool.Exec(ctx, `INSERT INTO flags (environment_id, key, is_enabled, rollout_percentage)
		VALUES ($1, $2, true, 0), ($1, $3, true, 100)`, h.env, benchFlag, benchOther)
	must(tb, err)
	interval := int(benchEvery / time.Second)
	h.rel, err = h.svc.Create(ctx, &auth.Principal{Kind: auth.KindSDKKey, EnvironmentID: h.env, KeyPrefix: "bench"}, h.env, benchFlag, release.Input{
		Stages:               []release.Stage{{Percentage: benchPercent, DurationSeconds: 2_592_000}, {Percentage: 100, DurationSeconds: 3600}},
		Metrics:              benchMetrics,
		CheckIntervalSeconds: &interval,
	})
	must(tb, err)

	// The users exposed before the first check, and their goal events.
	loaded := time.Now()
	imps := make([]db.CopyImpressionsParams, 0, users)
	for range users {
		imps = append(imps, h.impression(h.total, h.start.Add(h.within(benchLoadFor))))
		h.total++
	}
	h.copyRows(tb, imps, h.events(int(float64(users)*eventsPerUser), h.start, benchLoadFor))
	// What autovacuum does soon after such a load, done before the clock
	// starts: users who arrive over weeks leave no such backlog.
	_, err = h.pool.Exec(ctx, "VACUUM ANALYZE impressions, goal_events")
	must(tb, err)
	tb.Logf("loaded %d users' impressions and %d goal events in %v", users, int(float64(users)*eventsPerUser), time.Since(loaded).Round(time.Millisecond))

	h.startIngest(tb)
	h.setClock(h.start.Add(benchLoadFor))
	cold := h.check(tb)
	_, err = h.pool.Exec(ctx, "VACUUM ANALYZE release_users, release_user_metrics")
	must(tb, err)
	tb.Logf("cold check (folds %d users, %d goal events): %v; %s", users, int(float64(users)*eventsPerUser), cold.Round(time.Millisecond), h.spent.take())
	return h
}

func (h *checkHarness) setClock(t time.Time) { h.clock.Store(&t) }

// within is a random offset in [0, d).
func (h *checkHarness) within(d time.Duration) time.Duration {
	return time.Duration(h.rng.Int64N(int64(d)))
}

// impression is user i's impression of benchFlag at t: true when the user's
// bucket falls inside the stage's percentage, as the evaluator decides.
func (h *checkHarness) impression(i int, t time.Time) db.CopyImpressionsParams {
	user := "user-" + strconv.Itoa(i)
	value := "false"
	// The streaming hasher: murmur3.Sum32's unsafe reads of a short stack
	// buffer trip -race's pointer checks.
	hash := murmur3.New32()
	_, _ = hash.Write([]byte(benchFlag + ":" + user))
	if hash.Sum32()%100 < benchPercent {
		value = "true"
	}
	return db.CopyImpressionsParams{EnvironmentID: h.env, FlagKey: benchFlag, UserID: &user, Value: value, EvaluatedAt: t}
}

// events returns n goal events of users exposed so far, occurring in [from,
// from+d), spread over the metrics: revenue carries a value, the others none.
func (h *checkHarness) events(n int, from time.Time, d time.Duration) []db.CopyGoalEventsParams {
	out := make([]db.CopyGoalEventsParams, n)
	for i := range out {
		user := "user-" + strconv.Itoa(h.rng.IntN(h.total))
		m := benchMetrics[h.rng.IntN(len(benchMetrics))]
		var value *float64
		if m.Kind == release.KindMean {
			v := math.Round(h.rng.ExpFloat64()*4000) / 100
			value = &v
		}
		at := from.Add(h.within(d))
		out[i] = db.CopyGoalEventsParams{EnvironmentID: h.env, EventKey: m.EventKey, UserID: &user, Value: value, OccurredAt: at, ReceivedAt: at}
	}
	return out
}

// ingestInterval writes what one check interval brings: n new users'
// first impressions, n repeat impressions of known users (one in a
// hundred dated in the release's first second, delivered late, which moves
// the user's exposure earlier), and n/5 goal events; then moves the clock
// to the next check.
func (h *checkHarness) ingestInterval(tb testing.TB, n int) {
	tb.Helper()
	from := *h.clock.Load()
	imps := make([]db.CopyImpressionsParams, 0, 2*n)
	for i := range n {
		imps = append(imps, h.impression(h.rng.IntN(h.total), from.Add(h.within(benchEvery))))
		if i%100 == 0 {
			imps[len(imps)-1].EvaluatedAt = h.start.Add(h.within(time.Second))
		}
	}
	for range n {
		imps = append(imps, h.impression(h.total, from.Add(h.within(benchEvery))))
		h.total++
	}
	h.rng.Shuffle(len(imps), func(i, j int) { imps[i], imps[j] = imps[j], imps[i] })
	h.copyRows(tb, imps, h.events(int(float64(n)*eventsPerUser), from, benchEvery))
	h.setClock(from.Add(benchEvery))
}

// copyRows copies rows as ingest does: a transaction per batch holding the
// shared ingest lock.
func (h *checkHarness) copyRows(tb testing.TB, imps []db.CopyImpressionsParams, events []db.CopyGoalEventsParams) {
	tb.Helper()
	const batch = 100_000
	for len(imps) > 0 || len(events) > 0 {
		i, e := min(batch, len(imps)), min(batch, len(events))
		must(tb, h.ingest(h.ctx, imps[:i], events[:e]))
		imps, events = imps[i:], events[e:]
	}
}

func (h *checkHarness) ingest(ctx context.Context, imps []db.CopyImpressionsParams, events []db.CopyGoalEventsParams) error {
	return store.WithTx(ctx, h.pool, func(q *db.Queries) error {
		if err := q.LockIngestShared(ctx); err != nil {
			return err
		}
		if _, err := q.LockEnvironmentForIngest(ctx, h.env); err != nil {
			return err
		}
		if len(imps) > 0 {
			if _, err := q.CopyImpressions(ctx, imps); err != nil {
				return err
			}
		}
		if len(events) > 0 {
			if _, err := q.CopyGoalEvents(ctx, events); err != nil {
				return err
			}
		}
		return nil
	})
}

// startIngest starts the concurrent ingest: every 100 ms a batch of
// -release-ingest/10 impressions of another flag, users drawn from ten
// million.
func (h *checkHarness) startIngest(tb testing.TB) {
	per := *benchIngest / 10
	if per <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.stop, h.began = cancel, time.Now()
	tb.Cleanup(func() { cancel(); h.done.Wait() }) // before the pool closes
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		rng := rand.New(rand.NewPCG(2, 2))
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows := make([]db.CopyImpressionsParams, per)
			now := time.Now().UTC()
			for i := range rows {
				user := "visitor-" + strconv.Itoa(rng.IntN(10_000_000))
				rows[i] = db.CopyImpressionsParams{EnvironmentID: h.env, FlagKey: benchOther, UserID: &user, Value: "true", EvaluatedAt: now}
			}
			if err := h.ingest(ctx, rows, nil); err != nil {
				if ctx.Err() == nil {
					h.ingErr.Store(&err)
				}
				return
			}
			h.written.Add(int64(per))
		}
	}()
}

// stopIngest stops the concurrent ingest and logs the rate it kept.
func (h *checkHarness) stopIngest(tb testing.TB) {
	tb.Helper()
	if h.stop == nil {
		return
	}
	h.stop()
	h.done.Wait()
	if err := h.ingErr.Load(); err != nil {
		tb.Fatalf("concurrent ingest: %v", *err)
	}
	tb.Logf("concurrent ingest: %d impressions, %.0f a second", h.written.Load(), float64(h.written.Load())/time.Since(h.began).Seconds())
}

// check runs the due check and returns how long it took.
func (h *checkHarness) check(tb testing.TB) time.Duration {
	tb.Helper()
	began := time.Now()
	found, err := h.svc.RunReleaseCheck(context.WithValue(h.ctx, checking{}, true))
	took := time.Since(began)
	must(tb, err)
	if !found {
		tb.Fatal("no check was due")
	}
	var status string
	must(tb, h.pool.QueryRow(h.ctx, "SELECT status FROM releases WHERE id = $1", h.rel.ID).Scan(&status))
	if status != release.StatusRunning && status != release.StatusPaused {
		tb.Fatalf("the release is %s: the benchmark's data must not end it", status)
	}
	return took
}

// verify recounts each arm's users and each metric's converted users, sum
// and sum of squares from the raw rows the checks folded, and compares them
// with the incremental state.
func (h *checkHarness) verify(tb testing.TB) {
	tb.Helper()
	keys := make([]string, len(benchMetrics))
	for i, m := range benchMetrics {
		keys[i] = m.EventKey
	}
	rows, err := h.pool.Query(h.ctx, `
		WITH r AS (SELECT * FROM releases WHERE id = $1),
		firsts AS (
		    SELECT DISTINCT ON (i.user_id) i.user_id, i.value = 'true' AS treatment, i.evaluated_at AS exposed_at
		    FROM impressions i, r
		    WHERE i.environment_id = r.environment_id AND i.flag_key = r.flag_key AND i.id <= r.impressions_through
		      AND i.user_id IS NOT NULL AND i.evaluated_at >= r.started_at AND i.value IN ('true', 'false')
		    ORDER BY i.user_id, i.evaluated_at, i.id
		),
		per_user AS (
		    SELECT f.user_id, f.treatment, m.metric::integer AS metric, sum(coalesce(g.value, 1)) AS s
		    FROM firsts f
		    CROSS JOIN r
		    JOIN goal_events g ON g.environment_id = r.environment_id AND g.user_id = f.user_id
		     AND g.occurred_at >= f.exposed_at AND g.id <= r.events_through
		    JOIN unnest($2::text[]) WITH ORDINALITY AS m (event_key, metric) ON m.event_key = g.event_key
		    GROUP BY f.user_id, f.treatment, m.metric
		),
		arms AS (SELECT treatment, count(*) AS users FROM firsts GROUP BY treatment)
		SELECT a.treatment, a.metric, a.converted, a.total, a.total_sq,
		       coalesce(u.converted, 0), coalesce(u.total, 0), coalesce(u.total_sq, 0),
		       CASE WHEN a.treatment THEN r.treatment_users ELSE r.control_users END,
		       coalesce(arms.users, 0)
		FROM release_arm_metrics a
		JOIN r ON r.id = a.release_id
		LEFT JOIN (SELECT treatment, metric, count(*) AS converted, sum(s) AS total, sum(s * s) AS total_sq
		           FROM per_user GROUP BY treatment, metric) u ON u.treatment = a.treatment AND u.metric = a.metric
		LEFT JOIN arms ON arms.treatment = a.treatment
		ORDER BY a.metric, a.treatment`, h.rel.ID, keys)
	must(tb, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			treatment                    bool
			metric                       int32
			conv, wantConv, users, wantU int64
			total, sq, wantTotal, wantSq float64
		)
		must(tb, rows.Scan(&treatment, &metric, &conv, &total, &sq, &wantConv, &wantTotal, &wantSq, &users, &wantU))
		if conv != wantConv || users != wantU || !near(total, wantTotal) || !near(sq, wantSq) {
			tb.Errorf("treatment %v, metric %d: incremental users %d converted %d total %g sq %g; recount %d %d %g %g",
				treatment, metric, users, conv, total, sq, wantU, wantConv, wantTotal, wantSq)
		}
		n++
	}
	must(tb, rows.Err())
	if n != 2*len(benchMetrics) {
		tb.Errorf("%d arm rows, want %d", n, 2*len(benchMetrics))
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(math.Ceil(p*float64(len(s))))-1] // nearest rank
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func inMs(d []time.Duration) []int {
	out := make([]int, len(d))
	for i, v := range d {
		out[i] = int(v.Milliseconds())
	}
	return out
}

func intList(tb testing.TB, s string) []int {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			tb.Fatalf("%q: want positive integers separated by commas", s)
		}
		out = append(out, n)
	}
	return out
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
