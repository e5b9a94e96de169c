// Command stream measures Switchyard's real-time delivery side by side with
// a bare Go baseline, in one run, on this machine's loopback
// (docs/performance.md, Streaming and Snapshot):
//
//  1. A bare SSE broadcaster (this program re-executed with
//     -serve-baseline): one goroutine and one buffered channel per
//     connection, a pre-encoded 512-byte event flushed per event, a
//     trigger endpoint, and a bare handler serving a fixed snapshot body.
//  2. Switchyard (bin/switchyard, built from the repository) on a fresh
//     database, in-process bus (REDIS_URL empty).
//  3. -clients SSE connections from this process: server memory per
//     connection (VmRSS and Go heap before and after), then -runs
//     broadcasts (baseline trigger, Switchyard flag PATCH) with p50, p99
//     and max delivery latency over every client.
//  4. Two Switchyard instances on one database behind Redis, half the
//     clients on each, the PATCH sent to the first.
//  5. GET /flags/snapshot of a -snapshot-flags environment against the
//     bare handler returning the same bytes, -snapshot-conns closed-loop
//     keep-alive connections for -snapshot-duration each; then both again
//     with Accept-Encoding: gzip (-skip-gzip skips).
//
// -mode snapshot runs section 5 alone. -mode join (join.go)
// runs, for the bare broadcaster and for one Switchyard instance with
// -clients streams open: -runs single broadcasts, a burst of -burst writes
// alone (delivery and server CPU per delivered update), -joiners new
// streams with snapshot and /health probe loops on a quiet server, and the
// same during the burst.
//
// -mode ofrep (ofrep.go) measures remote evaluation: single-flag
// OFREP evaluations and 304 bulk polls against a bare handler returning a
// fixed 120-byte JSON body (closed loop, alternating rounds), the latency
// of a bulk evaluation of the -snapshot-flags environment on one connection
// in sequence, and -clients OFREP event streams against -clients /stream
// connections, taking turns, with -runs broadcasts each.
//
// It prints a table with the targets and cleans up (subprocesses,
// the scratch database). Everything runs against 127.0.0.1, bounded by
// -timeout. Opening 10,000 connections needs a file-descriptor limit above
// 20,000 for this process and its servers: the tool raises RLIMIT_NOFILE,
// which needs root (or `ulimit -n` raised beforehand); `make bench-stream`
// does both.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

type options struct {
	clients       int
	parallel      int
	runs          int
	timeout       time.Duration
	readyTimeout  time.Duration
	runTimeout    time.Duration
	settle        time.Duration
	idleWindow    time.Duration
	snapDuration  time.Duration
	snapConns     int
	snapRounds    int
	snapFlags     int
	adminURL      string
	redisURL      string
	repo          string
	bin           string
	baselineQueue int
	skipRedis     bool
	skipSnapshot  bool
	keepDB        bool
	logDir        string
	serverEnv     string
	perfDir       string
	ofrepTurn     int
	skipGzip      bool
	mode          string
	joiners       int
	joinParallel  int
	burst         int
	probeEvery    time.Duration
	seqRequests   int
	ofrepUsers    int
	ofrepStreams  bool
}

func main() {
	var o options
	serve := flag.Bool("serve-baseline", false, "internal: run the bare baseline server")
	flag.IntVar(&o.clients, "clients", 10_000, "SSE clients per scenario (split evenly over the two instances)")
	flag.IntVar(&o.parallel, "connect-parallel", 200, "connections being set up at once")
	flag.IntVar(&o.runs, "runs", 5, "broadcasts per scenario")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "global time limit; the tool cleans up and exits when it passes")
	flag.DurationVar(&o.readyTimeout, "ready-timeout", 3*time.Minute, "time for every client to read ready")
	flag.DurationVar(&o.runTimeout, "run-timeout", 30*time.Second, "time for one broadcast to reach every client")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "pause before reading memory, and between broadcasts")
	flag.DurationVar(&o.idleWindow, "idle-window", 16*time.Second, "with every client connected, measure the servers' idle CPU over this window (> the 15 s keep-alive); 0 skips")
	flag.DurationVar(&o.snapDuration, "snapshot-duration", 10*time.Second, "closed-loop load per snapshot target")
	flag.IntVar(&o.snapConns, "snapshot-conns", 64, "concurrent keep-alive connections of the snapshot load")
	flag.IntVar(&o.snapRounds, "snapshot-rounds", 2, "alternating rounds (bare, then switchyard) of the snapshot load")
	flag.IntVar(&o.snapFlags, "snapshot-flags", 200, "flags in the snapshot environment")
	flag.StringVar(&o.adminURL, "db", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"PostgreSQL URL of a role that may create databases; a scratch database is created beside it")
	flag.StringVar(&o.redisURL, "redis", "redis://127.0.0.1:6379/0", "Redis for the two-instance scenario")
	flag.StringVar(&o.repo, "repo", "../..", "repository root (where bin/switchyard is built)")
	flag.StringVar(&o.bin, "bin", "", "use this switchyard binary instead of building bin/switchyard")
	flag.IntVar(&o.baselineQueue, "baseline-queue", 16, "the baseline's per-connection channel capacity")
	flag.BoolVar(&o.skipRedis, "skip-redis", false, "skip the two-instance scenario")
	flag.BoolVar(&o.skipSnapshot, "skip-snapshot", false, "skip the snapshot throughput comparison")
	flag.BoolVar(&o.keepDB, "keep", false, "keep the scratch database")
	flag.StringVar(&o.logDir, "logs", "", "directory for the servers' logs (default: a temporary directory)")
	flag.StringVar(&o.serverEnv, "server-env", "", "extra environment for the switchyard processes, comma-separated KEY=VALUE (diagnosis, e.g. DB_MAX_CONNECTIONS=64)")
	flag.BoolVar(&o.skipGzip, "skip-gzip", false, "skip the gzip rounds of the snapshot comparison")
	flag.StringVar(&o.mode, "mode", "all", "all: sections 1-5; snapshot: section 5 only; join: new streams, snapshots and /health during a burst of writes (section 6); ofrep: remote evaluation (ofrep.go)")
	flag.IntVar(&o.ofrepTurn, "ofrep-turn", 1, "ofrep mode: broadcasts per turn of a fleet (ABBA…); more turns spread the machine's other load over both fleets")
	flag.IntVar(&o.seqRequests, "seq-requests", 2000, "ofrep mode: requests in sequence on one connection per latency measurement")
	flag.IntVar(&o.ofrepUsers, "ofrep-users", 2000, "ofrep mode: the users the single-flag load cycles through (each evaluated again and again: its exposures are remembered)")
	flag.BoolVar(&o.ofrepStreams, "ofrep-streams", true, "ofrep mode: measure the event streams against /stream (section 3); false skips them")
	flag.IntVar(&o.joiners, "joiners", 1000, "join mode: streams opened during the burst")
	flag.IntVar(&o.joinParallel, "join-parallel", 100, "join mode: joining connections being set up at once")
	flag.IntVar(&o.burst, "burst", 20, "join mode: writes in the burst")
	flag.DurationVar(&o.probeEvery, "probe-every", 10*time.Millisecond, "join mode: pause between a probe loop's requests (snapshot, /health)")
	flag.StringVar(&o.perfDir, "perf", "", "record perf(1) profiles of the single switchyard instance (broadcasts, snapshot load) into this directory")
	flag.Parse()
	if *serve {
		serveBaseline(o.baselineQueue)
		return
	}
	log.SetFlags(log.Ltime)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	// A last resort if cleanup itself hangs; subprocesses die with us.
	time.AfterFunc(o.timeout+2*time.Minute, func() { log.Print("hard time limit: exiting"); os.Exit(3) })
	if err := run(ctx, o); err != nil {
		log.Printf("FAILED: %v", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// raiseNoFile lifts RLIMIT_NOFILE so this process and the servers it starts
// (which inherit it) can hold the connections.
func raiseNoFile(need uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur >= need {
		return lim.Cur, nil
	}
	want := syscall.Rlimit{Cur: need, Max: max(lim.Max, need)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		// Not root: go as high as the hard limit allows.
		want = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want)
		return lim.Max, fmt.Errorf("RLIMIT_NOFILE could be raised only to %d (need %d): run as root or raise `ulimit -n`", lim.Max, need)
	}
	return need, nil
}

// streamResult is one scenario of section 3/4.
type streamResult struct {
	Name          string
	Clients       int
	ConnectTime   time.Duration
	RSSBefore     int64
	RSSAfter      int64
	HeapBefore    float64 // Go heap + goroutine stacks in use
	HeapAfter     float64
	StackBefore   float64 // of which stacks
	StackAfter    float64
	IdleCPU       time.Duration // server CPU over the idle window
	IdlePGCPU     time.Duration // PostgreSQL CPU over the idle window
	IdleWindow    time.Duration
	Runs          []broadcastResult
	FanoutMean    time.Duration // Switchyard's own fan-out histogram, mean over the runs
	FanoutMaxLE   float64       // and the upper bound of the bucket holding its largest observation
	FanoutSamples float64
	Err           error
}

func (r streamResult) PerConn() float64 {
	return float64(r.RSSAfter-r.RSSBefore) / float64(r.Clients)
}

func (r streamResult) HeapPerConn() float64 {
	return (r.HeapAfter - r.HeapBefore) / float64(r.Clients)
}

func (r streamResult) MedianP99() time.Duration {
	if len(r.Runs) == 0 {
		return 0
	}
	p := make([]time.Duration, len(r.Runs))
	for i, x := range r.Runs {
		p[i] = x.P99
	}
	slices.Sort(p)
	return p[len(p)/2]
}

func (r streamResult) MedianP50() time.Duration {
	return r.median(func(b broadcastResult) time.Duration { return b.P50 })
}

func (r streamResult) median(of func(broadcastResult) time.Duration) time.Duration {
	if len(r.Runs) == 0 {
		return 0
	}
	p := make([]time.Duration, len(r.Runs))
	for i, x := range r.Runs {
		p[i] = of(x)
	}
	slices.Sort(p)
	return p[len(p)/2]
}

func (r streamResult) AllReceived() bool {
	for _, x := range r.Runs {
		if x.Received != x.Expected {
			return false
		}
	}
	return len(r.Runs) > 0
}

// target is one stream server under test.
type target struct {
	name    string
	procs   []*proc
	path    string
	bearer  string
	marker  string
	heap    func(p *proc) (heap, stack float64)
	trigger func(ctx context.Context, run int) (val int64, sent time.Time, err error)
}

func run(ctx context.Context, o options) error {
	need := uint64(o.clients + 4096)
	lim, err := raiseNoFile(need)
	if err != nil {
		log.Printf("warning: %v", err)
		if max := int(lim) - 1024; max < o.clients {
			log.Printf("warning: clients lowered from %d to %d to fit RLIMIT_NOFILE %d", o.clients, max, lim)
			o.clients = max
		}
	}
	logDir := o.logDir
	if logDir == "" {
		if logDir, err = os.MkdirTemp("", "bench-stream-"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	log.Printf("clients %d, runs %d, RLIMIT_NOFILE %d, GOMAXPROCS %d, logs in %s", o.clients, o.runs, lim, runtime.GOMAXPROCS(0), logDir)

	bin := o.bin
	if bin == "" {
		repo, err := filepath.Abs(o.repo)
		if err != nil {
			return err
		}
		bin = filepath.Join(repo, "bin", "switchyard")
		log.Printf("building %s", bin)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
		cmd.Dir = repo
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build switchyard: %w", err)
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}

	// The scratch database.
	dbURL, drop, err := createDatabase(ctx, o.adminURL, o.keepDB)
	if err != nil {
		return err
	}
	defer drop()

	if o.mode == "join" && o.baselineQueue < 2*o.burst {
		// The baseline drops an event for a full channel: give a burst room.
		o.baselineQueue = 2 * o.burst
	}
	base, err := startBaseline(ctx, o.baselineQueue, logDir)
	if err != nil {
		return err
	}
	defer base.stop(5 * time.Second)

	var extraEnv []string
	if o.serverEnv != "" {
		extraEnv = strings.Split(o.serverEnv, ",")
	}
	sy, err := startSwitchyard(ctx, bin, "switchyard", dbURL, "", logDir, extraEnv)
	if err != nil {
		return err
	}
	stopSY := func() {
		if sy != nil {
			sy.stop(15 * time.Second)
			sy = nil
		}
	}
	defer func() { stopSY() }()
	fx, err := arrange(ctx, dbURL)
	if err != nil {
		return err
	}
	// OFREP's bulk evaluation with a client key sees client-side flags only.
	fx.ClientSide = o.mode == "ofrep"
	if err := createFlags(ctx, sy.addr, fx, o.snapFlags); err != nil {
		return err
	}
	log.Printf("switchyard on %s (pid %d), baseline on %s (pid %d)", sy.addr, sy.pid(), base.addr, base.pid())

	bare := target{
		name: "bare broadcaster", procs: []*proc{base}, path: "/stream", marker: "seq",
		heap: baselineHeap,
		trigger: func(ctx context.Context, _ int) (int64, time.Time, error) {
			sent := time.Now()
			var out struct {
				Seq   int64 `json:"seq"`
				Conns int   `json:"conns"`
			}
			resp, err := http.Post("http://"+base.addr+"/trigger", "application/json", nil)
			if err != nil {
				return 0, sent, err
			}
			defer resp.Body.Close()
			err = json.NewDecoder(resp.Body).Decode(&out)
			return out.Seq, sent, err
		},
	}
	switchyardTarget := func(name string, procs []*proc) target {
		return target{
			name: name, procs: procs, path: "/stream", bearer: fx.ProdKey, marker: "version",
			heap: switchyardHeap,
			trigger: func(ctx context.Context, run int) (int64, time.Time, error) {
				sent := time.Now()
				v, err := patchFlag(ctx, procs[0].addr, fx, 10+run%80)
				return v, sent, err
			},
		}
	}

	if o.mode == "ofrep" {
		return runOFREP(ctx, o, base, sy, fx)
	}
	if o.mode == "join" {
		return runJoin(ctx, o, base, sy, fx, bare, switchyardTarget("switchyard", []*proc{sy}))
	}

	var results []streamResult
	measure := func(t target) error {
		r := measureStreams(ctx, o, t)
		results = append(results, r)
		printStream(os.Stderr, r)
		return r.Err
	}
	if o.mode != "snapshot" {
		if err := measure(bare); err != nil {
			return err
		}
		if err := measure(switchyardTarget("switchyard, 1 instance", []*proc{sy})); err != nil {
			return err
		}
	}

	var snap []loadPair
	if !o.skipSnapshot {
		snap, err = measureSnapshot(ctx, o, base, sy, fx)
		if err != nil {
			return err
		}
	}
	stopSY()

	if !o.skipRedis && o.mode != "snapshot" {
		a, err := startSwitchyard(ctx, bin, "switchyard-a", dbURL, o.redisURL, logDir, extraEnv)
		if err != nil {
			return err
		}
		defer a.stop(15 * time.Second)
		b, err := startSwitchyard(ctx, bin, "switchyard-b", dbURL, o.redisURL, logDir, extraEnv)
		if err != nil {
			return err
		}
		defer b.stop(15 * time.Second)
		log.Printf("switchyard A on %s (pid %d), B on %s (pid %d), Redis %s", a.addr, a.pid(), b.addr, b.pid(), o.redisURL)
		if err := measure(switchyardTarget("switchyard, 2 instances + Redis", []*proc{a, b})); err != nil {
			return err
		}
	}

	printSummary(os.Stdout, o, results, snap)
	return nil
}

// createDatabase makes a scratch database beside adminURL's and returns its
// URL and a function that drops it.
func createDatabase(ctx context.Context, adminURL string, keep bool) (string, func(), error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", adminURL, err)
	}
	name := fmt.Sprintf("bench_stream_%d_%d", os.Getpid(), time.Now().Unix())
	benchDB = name
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(context.Background())
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		return "", nil, err
	}
	u := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	if cfg.Password != "" {
		u = fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, name)
	}
	log.Printf("scratch database %s", name)
	return u, func() {
		defer admin.Close(context.Background())
		if keep {
			log.Printf("kept database %s", name)
			return
		}
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(cctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			log.Printf("drop database %s: %v", name, err)
		}
	}, nil
}

func baselineHeap(p *proc) (heap, stack float64) {
	resp, err := http.Get("http://" + p.addr + "/heap")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	var out map[string]float64
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out["heap_inuse"], out["stack_inuse"]
}

func switchyardHeap(p *proc) (heap, stack float64) {
	m, err := scrape(p.addr)
	if err != nil {
		return 0, 0
	}
	return m["go_memstats_heap_inuse_bytes"], m["go_memstats_stack_inuse_bytes"]
}

func sumRSS(procs []*proc) int64 {
	var n int64
	for _, p := range procs {
		v, _ := rssBytes(p.pid())
		n += v
	}
	return n
}

func sumCPU(procs []*proc) time.Duration {
	var n time.Duration
	for _, p := range procs {
		n += cpuTime(p.pid())
	}
	return n
}

// measureStreams opens the clients, measures memory and idle CPU, runs the
// broadcasts and closes the clients.
func measureStreams(ctx context.Context, o options, t target) streamResult {
	r := streamResult{Name: t.name, Clients: o.clients}
	addrs := make([]string, len(t.procs))
	for i, p := range t.procs {
		addrs[i] = p.addr
	}
	heap := func() (float64, float64) {
		var h, st float64
		for _, p := range t.procs {
			a, b := t.heap(p)
			h, st = h+a, st+b
		}
		return h + st, st
	}
	time.Sleep(o.settle)
	r.RSSBefore = sumRSS(t.procs)
	r.HeapBefore, r.StackBefore = heap()
	log.Printf("[%s] opening %d streams", t.name, o.clients)
	f, took, err := openFleet(ctx, addrs, t.path, t.bearer, t.marker, o.clients, o.parallel, o.readyTimeout)
	defer func() {
		start := time.Now()
		f.close()
		log.Printf("[%s] closed %d streams in %s", t.name, o.clients, time.Since(start).Round(time.Millisecond))
	}()
	r.ConnectTime = took
	if err != nil {
		r.Err = fmt.Errorf("%s: %w", t.name, err)
		return r
	}
	log.Printf("[%s] %d streams ready in %s", t.name, o.clients, took.Round(time.Millisecond))
	time.Sleep(o.settle)
	r.RSSAfter = sumRSS(t.procs)
	r.HeapAfter, r.StackAfter = heap()

	if o.idleWindow > 0 {
		c0, pg0 := sumCPU(t.procs), postgresCPU()
		select {
		case <-time.After(o.idleWindow):
		case <-ctx.Done():
			r.Err = ctx.Err()
			return r
		}
		r.IdleCPU, r.IdlePGCPU, r.IdleWindow = sumCPU(t.procs)-c0, postgresCPU().since(pg0), o.idleWindow
		if n := f.failed.Load(); n > 0 {
			r.Err = fmt.Errorf("%s: %d streams ended while idle: %v", t.name, n, f.firstEr)
			return r
		}
	}

	var m0 []map[string]float64
	for _, p := range t.procs {
		if t.marker == "version" {
			m, _ := scrape(p.addr)
			m0 = append(m0, m)
		}
	}
	if len(t.procs) == 1 && t.marker == "version" {
		defer perfRecord(o.perfDir, "broadcasts", t.procs[0].pid())()
	}
	for i := range o.runs {
		if ctx.Err() != nil {
			r.Err = ctx.Err()
			return r
		}
		want := f.updates.Load() + int64(o.clients)
		val, sent, err := t.trigger(ctx, i)
		rtt := time.Since(sent)
		if err != nil {
			r.Err = fmt.Errorf("%s: broadcast %d: %w", t.name, i+1, err)
			return r
		}
		b := f.collect(ctx, want, val, sent, o.runTimeout)
		b.RTT = rtt
		r.Runs = append(r.Runs, b)
		log.Printf("[%s] broadcast %d: received %d/%d, trigger round trip %s, first %s, p50 %s, p99 %s, max %s", t.name, i+1, b.Received, b.Expected,
			ms(b.RTT), ms(b.Min), ms(b.P50), ms(b.P99), ms(b.Max))
		time.Sleep(o.settle / 2)
	}
	if len(m0) > 0 {
		var sum, count float64
		var maxLE float64
		for i, p := range t.procs {
			m1, err := scrape(p.addr)
			if err != nil {
				continue
			}
			sum += m1["switchyard_broadcast_fanout_seconds_sum"] - m0[i]["switchyard_broadcast_fanout_seconds_sum"]
			c := m1["switchyard_broadcast_fanout_seconds_count"] - m0[i]["switchyard_broadcast_fanout_seconds_count"]
			count += c
			maxLE = max(maxLE, maxBucket(m0[i], m1, "switchyard_broadcast_fanout_seconds_bucket", c))
		}
		if count > 0 {
			r.FanoutMean = time.Duration(sum / count * float64(time.Second))
		}
		r.FanoutMaxLE, r.FanoutSamples = maxLE, count
	}
	return r
}

// maxBucket returns the smallest bucket bound whose cumulative count grew by
// all `total` observations between m0 and m1.
func maxBucket(m0, m1 map[string]float64, name string, total float64) float64 {
	type b struct{ le, d float64 }
	var bs []b
	for k, v := range m1 {
		rest, ok := strings.CutPrefix(k, name+`{le="`)
		if !ok {
			continue
		}
		le, err := strconv.ParseFloat(strings.TrimSuffix(rest, `"}`), 64)
		if err != nil {
			continue // +Inf
		}
		bs = append(bs, b{le, v - m0[k]})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	for _, x := range bs {
		if x.d >= total {
			return x.le
		}
	}
	return 0
}

// loadPair is one snapshot round: the bare handler and Switchyard, then
// both again with Accept-Encoding: gzip (each serving a body compressed
// once).
type loadPair struct {
	Bare, SY           loadResult
	BareCPU, SYCPU     time.Duration
	BarePGCPU, SYPGCPU time.Duration

	BareGz, SYGz        loadResult
	BareGzCPU, SYGzCPU  time.Duration
	BareGzPG, SYGzPGCPU time.Duration
}

func measureSnapshot(ctx context.Context, o options, base, sy *proc, fx *fixture) ([]loadPair, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sy.addr+"/flags/snapshot", nil)
	req.Header.Set("Authorization", "Bearer "+fx.SnapKey)
	resp, err := apiClient.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		return nil, fmt.Errorf("snapshot: %d %v", resp.StatusCode, err)
	}
	fx.SnapLength = len(body)
	put, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+base.addr+"/snapshot", strings.NewReader(string(body)))
	resp, err = apiClient.Do(put)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	log.Printf("[snapshot] %d flags, %d bytes; %d connections, %s per target", fx.SnapFlags, len(body), o.snapConns, o.snapDuration)

	var pairs []loadPair
	profiled := false
	drive := func(p *proc, path, bearer, ae string) (loadResult, time.Duration, time.Duration, error) {
		// One second of warm-up, not counted.
		if _, err := closedLoop(ctx, p.addr, path, bearer, ae, o.snapConns, time.Second); err != nil {
			return loadResult{}, 0, 0, err
		}
		c0, pg0 := cpuTime(p.pid()), postgresCPU()
		var stopPerf func()
		if p == sy && !profiled {
			profiled = true
			stopPerf = perfRecord(o.perfDir, "snapshot", p.pid())
		}
		res, err := closedLoop(ctx, p.addr, path, bearer, ae, o.snapConns, o.snapDuration)
		if stopPerf != nil {
			stopPerf()
		}
		return res, cpuTime(p.pid()) - c0, postgresCPU().since(pg0), err
	}
	for round := range max(1, o.snapRounds) {
		var lp loadPair
		if lp.Bare, lp.BareCPU, lp.BarePGCPU, err = drive(base, "/snapshot", "", ""); err != nil {
			return nil, fmt.Errorf("bare snapshot load: %w", err)
		}
		log.Printf("[snapshot] round %d, bare handler: %.0f req/s (%d requests, %d errors, %d-byte bodies)", round+1, lp.Bare.RPS(), lp.Bare.Requests, lp.Bare.Errors, lp.Bare.Bytes)
		if lp.SY, lp.SYCPU, lp.SYPGCPU, err = drive(sy, "/flags/snapshot", fx.SnapKey, ""); err != nil {
			return nil, fmt.Errorf("switchyard snapshot load: %w", err)
		}
		log.Printf("[snapshot] round %d, switchyard: %.0f req/s (%d requests, %d errors, %d-byte bodies)", round+1, lp.SY.RPS(), lp.SY.Requests, lp.SY.Errors, lp.SY.Bytes)
		if !o.skipGzip {
			if lp.BareGz, lp.BareGzCPU, lp.BareGzPG, err = drive(base, "/snapshot", "", "gzip"); err != nil {
				return nil, fmt.Errorf("bare gzip snapshot load: %w", err)
			}
			log.Printf("[snapshot] round %d, bare handler, gzip: %.0f req/s (%d-byte bodies)", round+1, lp.BareGz.RPS(), lp.BareGz.Bytes)
			if lp.SYGz, lp.SYGzCPU, lp.SYGzPGCPU, err = drive(sy, "/flags/snapshot", fx.SnapKey, "gzip"); err != nil {
				return nil, fmt.Errorf("switchyard gzip snapshot load: %w", err)
			}
			log.Printf("[snapshot] round %d, switchyard, gzip: %.0f req/s (%d errors, %d-byte bodies)", round+1, lp.SYGz.RPS(), lp.SYGz.Errors, lp.SYGz.Bytes)
		}
		pairs = append(pairs, lp)
	}
	return pairs, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }

func printStream(w io.Writer, r streamResult) {
	fmt.Fprintf(w, "\n== %s: %d clients ==\n", r.Name, r.Clients)
	fmt.Fprintf(w, "connect+ready: %s\n", r.ConnectTime.Round(time.Millisecond))
	if r.RSSAfter > 0 {
		fmt.Fprintf(w, "VmRSS: %.1f MiB -> %.1f MiB = %s per connection; Go heap+stacks in use: %.1f MiB -> %.1f MiB = %s per connection\n",
			float64(r.RSSBefore)/(1<<20), float64(r.RSSAfter)/(1<<20), kib(r.PerConn()),
			r.HeapBefore/(1<<20), r.HeapAfter/(1<<20), kib(r.HeapPerConn()))
		fmt.Fprintf(w, "  of which goroutine stacks: %.1f MiB -> %.1f MiB = %s per connection\n",
			r.StackBefore/(1<<20), r.StackAfter/(1<<20), kib((r.StackAfter-r.StackBefore)/float64(r.Clients)))
	}
	if r.IdleWindow > 0 {
		fmt.Fprintf(w, "idle with every stream open, over %s: server CPU %s (%.0f %% of one core), PostgreSQL CPU %s\n",
			r.IdleWindow, r.IdleCPU, 100*r.IdleCPU.Seconds()/r.IdleWindow.Seconds(), r.IdlePGCPU)
	}
	for i, b := range r.Runs {
		fmt.Fprintf(w, "broadcast %d: received %d/%d  trigger round trip %s  first %s  p50 %s  p99 %s  max %s\n", i+1, b.Received, b.Expected,
			ms(b.RTT), ms(b.Min), ms(b.P50), ms(b.P99), ms(b.Max))
	}
	if len(r.Runs) > 0 {
		fmt.Fprintf(w, "median p99 %s\n", ms(r.MedianP99()))
	}
	if r.FanoutSamples > 0 {
		fmt.Fprintf(w, "switchyard_broadcast_fanout_seconds over the runs: %.0f observations, mean %s, all <= %g s\n",
			r.FanoutSamples, ms(r.FanoutMean), r.FanoutMaxLE)
	}
	if r.Err != nil {
		fmt.Fprintf(w, "error: %v\n", r.Err)
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func printSummary(w io.Writer, o options, results []streamResult, snap []loadPair) {
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "\n# bench/stream: %d clients, %d broadcasts per scenario (%s, %d CPUs, %s, load average %s; medians over the runs unless per run)\n\n",
		o.clients, o.runs, host, runtime.NumCPU(), runtime.Version(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintln(w, "| Scenario | Clients | Memory / conn (VmRSS) | Go heap+stacks / conn | Idle CPU (server / PostgreSQL) | Trigger round trip | First receipt | p50 | p99 per run | Median p99 | Received |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
	for _, r := range results {
		var p99s []string
		recv := "all"
		for _, b := range r.Runs {
			p99s = append(p99s, fmt.Sprintf("%.0f", float64(b.P99)/float64(time.Millisecond)))
			if b.Received != b.Expected {
				recv = "NOT all"
			}
		}
		mem, heap := kib(r.PerConn()), kib(r.HeapPerConn())
		idle := "-"
		if r.IdleWindow > 0 {
			idle = fmt.Sprintf("%.0f %% / %.0f %%", 100*r.IdleCPU.Seconds()/r.IdleWindow.Seconds(), 100*r.IdlePGCPU.Seconds()/r.IdleWindow.Seconds())
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s ms | %s | %s (%d × %d) |\n", r.Name, r.Clients, mem, heap, idle,
			ms(r.median(func(b broadcastResult) time.Duration { return b.RTT })),
			ms(r.median(func(b broadcastResult) time.Duration { return b.Min })),
			ms(r.MedianP50()), strings.Join(p99s, ", "), ms(r.MedianP99()), recv, len(r.Runs), r.Clients)
	}
	fmt.Fprintln(w)
	if len(snap) > 0 {
		fmt.Fprintln(w, "| Snapshot (round) | Body | Requests/s | Errors | Server CPU | PostgreSQL CPU |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
		for i, p := range snap {
			for _, x := range []struct {
				n       string
				r       loadResult
				cpu, pg time.Duration
			}{{"bare net/http handler", p.Bare, p.BareCPU, p.BarePGCPU}, {"switchyard GET /flags/snapshot", p.SY, p.SYCPU, p.SYPGCPU},
				{"bare handler, gzip", p.BareGz, p.BareGzCPU, p.BareGzPG}, {"switchyard, Accept-Encoding: gzip", p.SYGz, p.SYGzCPU, p.SYGzPGCPU}} {
				if x.r.Elapsed == 0 {
					continue
				}
				fmt.Fprintf(w, "| %s (%d) | %d B | %.0f | %d | %.0f %% | %.0f %% |\n", x.n, i+1, x.r.Bytes, x.r.RPS(), x.r.Errors,
					100*x.cpu.Seconds()/x.r.Elapsed.Seconds(), 100*x.pg.Seconds()/x.r.Elapsed.Seconds())
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| Target | Measured | Ratio | Verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	var bare, one, two *streamResult
	for i := range results {
		switch {
		case strings.HasPrefix(results[i].Name, "bare"):
			bare = &results[i]
		case strings.Contains(results[i].Name, "1 instance"):
			one = &results[i]
		case strings.Contains(results[i].Name, "2 instances"):
			two = &results[i]
		}
	}
	if one != nil {
		pc := one.PerConn()
		fmt.Fprintf(w, "| ≤ 40 KiB per connection (1 instance, VmRSS) | %s (bare: %s) | %.2f × the bare one | %s |\n",
			kib(pc), kib(bare.PerConn()), pc/bare.PerConn(), verdict(pc <= 40*1024))
	}
	if bare != nil && one != nil {
		ratio := float64(one.MedianP99()) / float64(bare.MedianP99())
		fmt.Fprintf(w, "| 1 instance p99 ≤ 1.5 × bare p99 | %s vs %s | %.2f × | %s |\n", ms(one.MedianP99()), ms(bare.MedianP99()), ratio,
			verdict(ratio <= 1.5 && one.AllReceived()))
	}
	if bare != nil && two != nil {
		ratio := float64(two.MedianP99()) / float64(bare.MedianP99())
		fmt.Fprintf(w, "| 2 instances + Redis p99 ≤ 2 × bare p99 | %s vs %s | %.2f × | %s |\n", ms(two.MedianP99()), ms(bare.MedianP99()), ratio,
			verdict(ratio <= 2 && two.AllReceived()))
	}
	if len(snap) > 0 {
		var bare, sy loadResult
		for _, p := range snap {
			bare.Requests += p.Bare.Requests
			bare.Elapsed += p.Bare.Elapsed
			sy.Requests += p.SY.Requests
			sy.Elapsed += p.SY.Elapsed
			sy.Errors += p.SY.Errors
		}
		ratio := sy.RPS() / bare.RPS()
		fmt.Fprintf(w, "| snapshot ≥ 70 %% of the bare handler's requests/s (%d-byte body, %d rounds) | %.0f vs %.0f req/s | %.0f %% | %s |\n",
			snap[0].SY.Bytes, len(snap), sy.RPS(), bare.RPS(), 100*ratio, verdict(ratio >= 0.70 && sy.Errors == 0))
		var bz, sz loadResult
		for _, p := range snap {
			bz.Requests += p.BareGz.Requests
			bz.Elapsed += p.BareGz.Elapsed
			sz.Requests += p.SYGz.Requests
			sz.Elapsed += p.SYGz.Elapsed
			sz.Errors += p.SYGz.Errors
		}
		if sz.Elapsed > 0 {
			fmt.Fprintf(w, "| snapshot with gzip (%d-byte body), against the bare handler serving the same compressed bytes | %.0f vs %.0f req/s | %.0f %% | (no target) |\n",
				snap[0].SYGz.Bytes, sz.RPS(), bz.RPS(), 100*sz.RPS()/bz.RPS())
		}
	}

}
