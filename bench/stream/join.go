package main

// -mode join (docs/performance.md, New streams and snapshots during a
// burst) checks that fan-out does not make new clients wait: while
// -clients streams receive a burst of -burst writes, -joiners new streams
// connect, and two probe loops fetch the 200-flag snapshot and /health.
// The /health probe takes no lock and reads no database: it is the control
// that shows how much of the joins' and snapshots' latency is the
// machine's (two cores running the fan-out) rather than the server's
// locks. The same is run against the bare broadcaster, which also gives
// the CPU cost of a delivered update for both servers.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// probeResult is one probe loop set's latencies.
type probeResult struct {
	Lat    []time.Duration // sorted
	Errors int
}

func (p probeResult) P99() time.Duration {
	if len(p.Lat) == 0 {
		return 0
	}
	return pct(p.Lat, 0.99)
}

func (p probeResult) P50() time.Duration {
	if len(p.Lat) == 0 {
		return 0
	}
	return pct(p.Lat, 0.50)
}

// startProbe runs loops goroutines, each sending GET url on its own
// keep-alive connection, pausing every between requests, until the
// returned function is called; that function returns the latencies.
func startProbe(ctx context.Context, url, bearer string, loops int, every time.Duration) func() probeResult {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var res probeResult
	var wg sync.WaitGroup
	for range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if bearer != "" {
					req.Header.Set("Authorization", "Bearer "+bearer)
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				d := time.Since(start)
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil {
						res.Errors++
					}
				} else {
					res.Lat = append(res.Lat, d)
				}
				mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(every):
				}
			}
		}()
	}
	return func() probeResult {
		cancel()
		wg.Wait()
		slices.Sort(res.Lat)
		return res
	}
}

// phaseResult is one phase of a join run.
type phaseResult struct {
	Window       time.Duration
	Joins        probeResult // time from dialling to `ready`
	Snap, Health probeResult
	// The burst, when there is one.
	Writes        int
	WriteP99s     []time.Duration // per write, over every stream
	DeliverP99    time.Duration   // over every (stream, write)
	Delivered     int64           // updates read by the -clients streams
	CPU           time.Duration   // server CPU over the window
	Complete      bool            // every stream got the last write
	PerUpdateNano float64
}

// joinTarget is one server with its probe addresses.
type joinTarget struct {
	target
	snapPath, snapBearer string
}

// lastVal is the newest value a client has read.
func (c *client) lastVal() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		return -1
	}
	return c.got[len(c.got)-1].val
}

// phase runs one measurement window on a target whose -clients streams are
// open in f: joiners new streams (0: none), the probes (when probe), and a
// burst of writes (when burst > 0). It ends when every joiner is ready and
// every stream has the last write, and not before minWindow (so that quiet
// probes gather enough samples).
func phase(ctx context.Context, o options, t joinTarget, f *fleet, joiners, burst int, probe bool, minWindow time.Duration, trig func() (int64, time.Time, error), perf func() func()) (phaseResult, error) {
	var r phaseResult
	addr := t.procs[0].addr
	var stopSnap, stopHealth func() probeResult
	if probe {
		stopSnap = startProbe(ctx, "http://"+addr+t.snapPath, t.snapBearer, 2, o.probeEvery)
		stopHealth = startProbe(ctx, "http://"+addr+"/health", "", 2, o.probeEvery)
	}
	updates0 := f.updates.Load()
	c0 := sumCPU(t.procs)
	stopPerf := perf()
	start := time.Now()
	var jf *fleet
	var jerr error
	joined := make(chan struct{})
	if joiners > 0 {
		go func() {
			defer close(joined)
			jf, _, jerr = openFleet(ctx, []string{addr}, t.path, t.bearer, t.marker, joiners, o.joinParallel, o.readyTimeout)
		}()
	} else {
		close(joined)
	}
	var vals []int64
	var sents []time.Time
	var err error
	for range burst {
		val, sent, e := trig()
		if e != nil {
			err = fmt.Errorf("write %d of the burst: %w", len(vals)+1, e)
			break
		}
		vals, sents = append(vals, val), append(sents, sent)
	}
	if len(vals) > 0 {
		last := vals[len(vals)-1]
		deadline := time.Now().Add(o.runTimeout)
		for ctx.Err() == nil && time.Now().Before(deadline) {
			missing := 0
			for _, c := range f.clients {
				if c.lastVal() < last {
					missing++
					break
				}
			}
			if missing == 0 {
				r.Complete = true
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	<-joined
	if rest := minWindow - time.Since(start); rest > 0 {
		time.Sleep(rest)
	}
	r.Window = time.Since(start)
	r.CPU = sumCPU(t.procs) - c0
	stopPerf()
	r.Delivered = f.updates.Load() - updates0
	if r.Delivered > 0 {
		r.PerUpdateNano = float64(r.CPU.Nanoseconds()) / float64(r.Delivered)
	}
	if probe {
		r.Snap, r.Health = stopSnap(), stopHealth()
	}
	if jf != nil {
		for _, c := range jf.clients {
			c.mu.Lock()
			if c.readyIn > 0 {
				r.Joins.Lat = append(r.Joins.Lat, c.readyIn)
			} else {
				r.Joins.Errors++
			}
			c.mu.Unlock()
		}
		slices.Sort(r.Joins.Lat)
		jf.close()
	}
	if jerr != nil && err == nil {
		err = fmt.Errorf("joiners: %w", jerr)
	}
	// Latency of write i at a stream: its first update carrying write i's
	// value or a later one (Switchyard coalesces writes that commit while
	// it re-reads the flag: the stream then skips to the newer version).
	r.Writes = len(vals)
	var all []time.Duration
	for i, v := range vals {
		lat := make([]time.Duration, 0, len(f.clients))
		for _, c := range f.clients {
			c.mu.Lock()
			for _, g := range c.got {
				if g.val >= v {
					lat = append(lat, g.at.Sub(sents[i]))
					break
				}
			}
			c.mu.Unlock()
		}
		slices.Sort(lat)
		if len(lat) > 0 {
			r.WriteP99s = append(r.WriteP99s, pct(lat, 0.99))
		}
		all = append(all, lat...)
	}
	if len(all) > 0 {
		slices.Sort(all)
		r.DeliverP99 = pct(all, 0.99)
	}
	if len(vals) > 0 && !r.Complete && err == nil {
		err = fmt.Errorf("not every stream got the last write within %s", o.runTimeout)
	}
	return r, err
}

// joinResult is one target's figures in a join run.
type joinResult struct {
	Name         string
	SingleP99    []time.Duration // quiet single broadcasts, as in section 3
	BurstOnly    phaseResult     // the burst alone: delivery and CPU per update
	Quiet        phaseResult     // joins and probes alone
	Busy         phaseResult     // joins and probes during the burst
	Load0, Load1 string
}

func (r joinResult) medianSingle() time.Duration {
	if len(r.SingleP99) == 0 {
		return 0
	}
	s := slices.Clone(r.SingleP99)
	slices.Sort(s)
	return s[len(s)/2]
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func runJoin(ctx context.Context, o options, base, sy *proc, fx *fixture, bare, syT target) error {
	// The bare handler serves the same snapshot bytes as Switchyard.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sy.addr+"/flags/snapshot", nil)
	req.Header.Set("Authorization", "Bearer "+fx.SnapKey)
	resp, err := apiClient.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("snapshot: %d %v", resp.StatusCode, err)
	}
	put, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+base.addr+"/snapshot", strings.NewReader(string(body)))
	if resp, err = apiClient.Do(put); err != nil {
		return err
	}
	resp.Body.Close()

	var results []joinResult
	for _, t := range []joinTarget{
		{target: bare, snapPath: "/snapshot"},
		{target: syT, snapPath: "/flags/snapshot", snapBearer: fx.SnapKey},
	} {
		r, err := joinTargetRun(ctx, o, t)
		results = append(results, r)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	printJoin(os.Stdout, o, results)
	return nil
}

func joinTargetRun(ctx context.Context, o options, t joinTarget) (joinResult, error) {
	r := joinResult{Name: t.name, Load0: loadavg()}
	addrs := []string{t.procs[0].addr}
	log.Printf("[%s] opening %d streams", t.name, o.clients)
	f, took, err := openFleet(ctx, addrs, t.path, t.bearer, t.marker, o.clients, o.parallel, o.readyTimeout)
	defer func() {
		f.close()
	}()
	if err != nil {
		return r, err
	}
	log.Printf("[%s] %d streams ready in %s", t.name, o.clients, took.Round(time.Millisecond))
	time.Sleep(o.settle)
	n := 0
	trig := func() (int64, time.Time, error) {
		n++
		return t.trigger(ctx, n)
	}
	for i := range o.runs {
		want := f.updates.Load() + int64(o.clients)
		val, sent, err := trig()
		if err != nil {
			return r, fmt.Errorf("broadcast %d: %w", i+1, err)
		}
		b := f.collect(ctx, want, val, sent, o.runTimeout)
		if b.Received != b.Expected {
			return r, fmt.Errorf("broadcast %d reached %d of %d streams", i+1, b.Received, b.Expected)
		}
		r.SingleP99 = append(r.SingleP99, b.P99)
		log.Printf("[%s] broadcast %d: p99 %s", t.name, i+1, ms(b.P99))
		time.Sleep(o.settle / 2)
	}
	noPerf := func() func() { return func() {} }
	perf := func() func() {
		name := "burst-bare"
		if t.marker == "version" {
			name = "burst-switchyard"
		}
		return perfRecord(o.perfDir, name, t.procs[0].pid())
	}
	if r.BurstOnly, err = phase(ctx, o, t, f, 0, o.burst, false, 0, trig, perf); err != nil {
		return r, fmt.Errorf("burst: %w", err)
	}
	log.Printf("[%s] burst of %d: delivery p99 %s, %d updates, CPU %s = %.1f µs per update", t.name, o.burst,
		ms(r.BurstOnly.DeliverP99), r.BurstOnly.Delivered, r.BurstOnly.CPU, r.BurstOnly.PerUpdateNano/1e3)
	time.Sleep(o.settle)
	if r.Quiet, err = phase(ctx, o, t, f, o.joiners, 0, true, time.Second, trig, noPerf); err != nil {
		return r, fmt.Errorf("quiet joins: %w", err)
	}
	log.Printf("[%s] quiet: join p99 %s, snapshot p99 %s, /health p99 %s", t.name, ms(r.Quiet.Joins.P99()), ms(r.Quiet.Snap.P99()), ms(r.Quiet.Health.P99()))
	time.Sleep(o.settle)
	if r.Busy, err = phase(ctx, o, t, f, o.joiners, o.burst, true, 0, trig, noPerf); err != nil {
		return r, fmt.Errorf("joins during the burst: %w", err)
	}
	log.Printf("[%s] during the burst: join p99 %s, snapshot p99 %s, /health p99 %s, delivery p99 %s", t.name,
		ms(r.Busy.Joins.P99()), ms(r.Busy.Snap.P99()), ms(r.Busy.Health.P99()), ms(r.Busy.DeliverP99))
	r.Load1 = loadavg()
	return r, nil
}

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func printJoin(w io.Writer, o options, rs []joinResult) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\n# bench/stream -mode join: %d streams, a burst of %d writes, %d joiners, probes every %s (%s, load average %s at the start, %s at the end)\n\n",
		o.clients, o.burst, o.joiners, o.probeEvery, host, rs[0].Load0, rs[len(rs)-1].Load1)
	fmt.Fprintln(w, "| Server | Phase | Join p99 | Snapshot p99 | /health p99 | Join / health | Snapshot / health | Delivery p99 | Window | Server CPU | CPU per delivered update |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		for _, p := range []struct {
			name string
			p    phaseResult
		}{{"burst only", r.BurstOnly}, {"joins, quiet", r.Quiet}, {"joins during the burst", r.Busy}} {
			join, snap, health, jr, sr := "-", "-", "-", "-", "-"
			if len(p.p.Joins.Lat) > 0 {
				join, jr = ms(p.p.Joins.P99()), ratio(p.p.Joins.P99(), p.p.Health.P99())
			}
			if len(p.p.Health.Lat) > 0 {
				snap, health, sr = ms(p.p.Snap.P99()), ms(p.p.Health.P99()), ratio(p.p.Snap.P99(), p.p.Health.P99())
			}
			deliver, per := "-", "-"
			if p.p.Writes > 0 {
				deliver = ms(p.p.DeliverP99)
				per = fmt.Sprintf("%.1f µs (%d updates)", p.p.PerUpdateNano/1e3, p.p.Delivered)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Name, p.name, join, snap, health, jr, sr,
				deliver, p.p.Window.Round(time.Millisecond), p.p.CPU, per)
		}
	}
	if len(rs) == 2 {
		b, s := rs[0], rs[1]
		fmt.Fprintf(w, "\nsingle broadcasts to %d streams, median p99: bare %s, switchyard %s = %s × (target ≤ 1.1)\n", o.clients,
			ms(b.medianSingle()), ms(s.medianSingle()), ratio(s.medianSingle(), b.medianSingle()))
		fmt.Fprintf(w, "burst of %d, delivery p99 over every (stream, write): bare %s, switchyard %s = %s ×\n", o.burst,
			ms(b.BurstOnly.DeliverP99), ms(s.BurstOnly.DeliverP99), ratio(s.BurstOnly.DeliverP99, b.BurstOnly.DeliverP99))
		fmt.Fprintf(w, "CPU per delivered update: bare %.1f µs, switchyard %.1f µs = %.2f ×\n", b.BurstOnly.PerUpdateNano/1e3,
			s.BurstOnly.PerUpdateNano/1e3, s.BurstOnly.PerUpdateNano/b.BurstOnly.PerUpdateNano)
	}
	// One line for scripts that gather several runs.
	type row struct {
		Name                                string
		SingleP99, BurstP99, BusyDeliverP99 float64
		CPUPerUpdateUS                      float64
		QuietJoin, QuietSnap, QuietHealth   float64
		BusyJoin, BusySnap, BusyHealth      float64
		Load0, Load1                        string
	}
	msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var rows []row
	for _, r := range rs {
		rows = append(rows, row{r.Name, msf(r.medianSingle()), msf(r.BurstOnly.DeliverP99), msf(r.Busy.DeliverP99), r.BurstOnly.PerUpdateNano / 1e3,
			msf(r.Quiet.Joins.P99()), msf(r.Quiet.Snap.P99()), msf(r.Quiet.Health.P99()),
			msf(r.Busy.Joins.P99()), msf(r.Busy.Snap.P99()), msf(r.Busy.Health.P99()), r.Load0, r.Load1})
	}
	js, _ := json.Marshal(rows)
	fmt.Fprintf(w, "\nJOIN-RESULT %s\n", js)
}
