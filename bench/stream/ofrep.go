package main

// -mode ofrep (docs/performance.md, Remote evaluation): remote evaluation
// against bare baselines, side by side in one run.
//
//  1. Closed-loop load (-snapshot-conns connections, -snapshot-duration per
//     target, -snapshot-rounds alternating rounds): the bare handler's
//     fixed 120-byte JSON, a single-flag OFREP evaluation (server key,
//     with a targetingKey cycling through -ofrep-users repeat users, so
//     each evaluation is recorded: an impression for a first exposure, a
//     summary count for the others), and a 304 bulk poll (client key,
//     If-None-Match with the current tag). Every target gets a POST body
//     of the same shape and an Authorization header. A fourth target is
//     the single flag for the same users with an empty targetingKey (each
//     user key in an attribute instead): the same evaluations with nothing
//     recorded, the reference of the recording target (server + PostgreSQL
//     CPU per request, round by round; the two run back to back, in
//     turns; the users' first exposures are recorded before the rounds).
//     The scratch database then shows what was recorded.
//  2. One connection, requests in sequence (-seq-requests each): the
//     latency from writing a request to reading its answer, on loopback,
//     an upper bound of the server's time; and the server CPU per request.
//     Bare handler, single flag, bulk evaluation of the 200-flag
//     environment (200 flags marked client-side, client key), 304 poll.
//  3. -clients /stream connections (production, server key), then -clients
//     OFREP event streams (development, client key), taking turns on one
//     instance (/stream, OFREP, OFREP, /stream, …), each open alone for
//     -ofrep-turn broadcasts at a time (a PATCH of its environment's flag)
//     until each fleet has had -runs, each timed from the PATCH to the
//     last client's receipt.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ofrepBody is the body of the bare, 304 and latency targets: one user with
// three attributes.
const ofrepBody = `{"context":{"targetingKey":"user-42","plan":"pro","country":"DE","beta":true}}`

// ofrepUserBody is the single-flag load's body for repeat user i.
func ofrepUserBody(i int) []byte {
	return fmt.Appendf(nil, `{"context":{"targetingKey":"user-%04d","plan":"pro","country":"DE","beta":true}}`, i)
}

// ofrepAnonBody is the reference of the recording target: the same users'
// contexts with an empty targetingKey (the user key moved into an
// attribute, so the server reads as much), anonymous evaluations, which
// record nothing (docs/reference/ofrep.md, Impressions). Loaded beside the
// recording target, it is the same load with recording off.
func ofrepAnonBody(i int) []byte {
	return fmt.Appendf(nil, `{"context":{"targetingKey":"","plan":"pro","country":"DE","beta":true,"id":"user-%04d"}}`, i)
}

// ofrepFlag is the event-stream flag, in development.
const ofrepFlag = "bench-ofrep-flag"

type ofrepLoad struct {
	res     loadResult
	cpu, pg time.Duration
	warm    int64 // requests of the warm-up before it
}

// perRequest is the server and PostgreSQL CPU per request.
func (l ofrepLoad) perRequest() time.Duration {
	return (l.cpu + l.pg) / time.Duration(max(1, l.res.Requests))
}

// recordingOverhead is how much more server + PostgreSQL CPU a request
// recorded takes than one not recorded, in one round.
func (r ofrepRound) recordingOverhead() float64 {
	return float64(r.Single.perRequest())/float64(r.Anon.perRequest()) - 1
}

type ofrepRound struct {
	Bare, Single, NotMod, Anon ofrepLoad
}

type ofrepLatency struct {
	Name  string
	Lat   []time.Duration // sorted
	CPU   time.Duration   // server CPU over the requests
	Bytes int
}

func (l ofrepLatency) cpuPer() time.Duration { return l.CPU / time.Duration(max(1, len(l.Lat))) }

type ofrepResults struct {
	SingleBytes, BulkBytes, BulkFlags int
	Rounds                            []ofrepRound
	Seq                               []ofrepLatency
	Stream, Events                    streamResult
	StreamCPU, EventsCPU              []time.Duration // server CPU per broadcast
	Dropped                           float64         // evaluations not recorded (full queue) over the closed loop
	Recorded                          ofrepRecorded
}

// ofrepRecorded is what the closed loop's single-flag evaluations left in
// the database: impressions (first exposures) and summary rows.
type ofrepRecorded struct {
	Evaluations             int64 // single-flag evaluations with a targetingKey sent
	Impressions, Rows, Sums int64 // impressions, summary rows, evaluations they count
}

// checkOFREP sends one request with net/http and returns the answer.
func checkOFREP(ctx context.Context, addr, path, key, inm string, want int) (*http.Response, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, strings.NewReader(ofrepBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != want {
		return nil, nil, fmt.Errorf("POST %s: status %d, want %d: %s", path, resp.StatusCode, want, body)
	}
	return resp, body, nil
}

func runOFREP(ctx context.Context, o options, base, sy *proc, fx *fixture) error {
	var out ofrepResults
	addr := sy.addr
	singlePath := "/ofrep/v1/evaluate/flags/snapshot-flag-007"
	bulkPath := "/ofrep/v1/evaluate/flags"

	// What each target answers, checked once with a real HTTP client.
	_, body, err := checkOFREP(ctx, addr, singlePath, fx.SnapKey, "", http.StatusOK)
	if err != nil {
		return err
	}
	out.SingleBytes = len(body)
	resp, body, err := checkOFREP(ctx, addr, bulkPath, fx.SnapClientKey, "", http.StatusOK)
	if err != nil {
		return err
	}
	var bulk struct {
		Flags []json.RawMessage `json:"flags"`
	}
	if err := json.Unmarshal(body, &bulk); err != nil {
		return fmt.Errorf("bulk answer: %w", err)
	}
	out.BulkBytes, out.BulkFlags = len(body), len(bulk.Flags)
	if out.BulkFlags != fx.SnapFlags {
		return fmt.Errorf("bulk answer has %d flags, want %d (client-side flags)", out.BulkFlags, fx.SnapFlags)
	}
	tag := resp.Header.Get("ETag")
	if _, _, err := checkOFREP(ctx, addr, bulkPath, fx.SnapClientKey, tag, http.StatusNotModified); err != nil {
		return err
	}
	log.Printf("[ofrep] single: %d-byte answer; bulk: %d flags, %d bytes, ETag %s; bare: %d bytes", out.SingleBytes, out.BulkFlags, out.BulkBytes, tag, len(fixedBody))

	// The same body and the same kind of header for every target.
	body = []byte(ofrepBody)
	bareReq := rawRequest(http.MethodPost, base.addr, "/fixed", []string{"Authorization: Bearer " + fx.SnapKey}, body)
	singleReq := rawRequest(http.MethodPost, addr, singlePath, []string{"Authorization: Bearer " + fx.SnapKey}, body)
	bulkReq := rawRequest(http.MethodPost, addr, bulkPath, []string{"Authorization: Bearer " + fx.SnapClientKey}, body)
	notModReq := rawRequest(http.MethodPost, addr, bulkPath, []string{"Authorization: Bearer " + fx.SnapClientKey, "If-None-Match: " + tag}, body)
	usersReqs, anonReqs := make([][]byte, max(1, o.ofrepUsers)), make([][]byte, max(1, o.ofrepUsers))
	for i := range usersReqs {
		usersReqs[i] = rawRequest(http.MethodPost, addr, singlePath, []string{"Authorization: Bearer " + fx.SnapKey}, ofrepUserBody(i))
		anonReqs[i] = rawRequest(http.MethodPost, addr, singlePath, []string{"Authorization: Bearer " + fx.SnapKey}, ofrepAnonBody(i))
	}

	m0, _ := scrape(addr)
	profiled := map[string]bool{}
	drive := func(p *proc, reqs [][]byte, want int, name string) (ofrepLoad, error) {
		warm, err := closedLoopReqs(ctx, p.addr, reqs, want, o.snapConns, time.Second)
		if err != nil {
			return ofrepLoad{}, err
		}
		c0, pg0 := cpuTime(p.pid()), postgresCPU()
		stopPerf := func() {}
		if p == sy && !profiled[name] {
			profiled[name] = true
			stopPerf = perfRecord(o.perfDir, name, p.pid())
		}
		res, err := closedLoopReqs(ctx, p.addr, reqs, want, o.snapConns, o.snapDuration)
		stopPerf()
		return ofrepLoad{res: res, cpu: cpuTime(p.pid()) - c0, pg: postgresCPU().since(pg0), warm: warm.Requests}, err
	}
	one := func(req []byte) [][]byte { return [][]byte{req} }
	// The recording target measures repeat users: every user is evaluated
	// once first, and its first exposures are written and folded.
	primed, err := closedLoopReqs(ctx, addr, usersReqs, http.StatusOK, o.snapConns, time.Second)
	if err != nil {
		return fmt.Errorf("first exposures: %w", err)
	}
	out.Recorded.Evaluations += primed.Requests
	time.Sleep(3 * time.Second)
	log.Printf("[ofrep] closed loop: %d connections, %s per target, %d rounds", o.snapConns, o.snapDuration, o.snapRounds)
	for round := range max(1, o.snapRounds) {
		var r ofrepRound
		if r.Bare, err = drive(base, one(bareReq), http.StatusOK, "bare"); err != nil {
			return fmt.Errorf("bare handler load: %w", err)
		}
		if r.NotMod, err = drive(sy, one(notModReq), http.StatusNotModified, "ofrep-304"); err != nil {
			return fmt.Errorf("304 poll load: %w", err)
		}
		// Recorded and not recorded back to back, in turns (ABBA…), so
		// that the machine's other load weighs on both alike.
		for i := range 2 {
			if (i+round)%2 == 0 {
				if r.Single, err = drive(sy, usersReqs, http.StatusOK, "ofrep-single"); err != nil {
					return fmt.Errorf("single-flag load: %w", err)
				}
			} else if r.Anon, err = drive(sy, anonReqs, http.StatusOK, "ofrep-anonymous"); err != nil {
				return fmt.Errorf("anonymous single-flag load: %w", err)
			}
		}
		log.Printf("[ofrep] round %d: bare %.0f req/s, single flag %.0f req/s (%d errors, %s CPU per request), 304 poll %.0f req/s (%d errors), anonymous single flag %.0f req/s (%s CPU per request): recording adds %+.1f %%", round+1,
			r.Bare.res.RPS(), r.Single.res.RPS(), r.Single.res.Errors, us(r.Single.perRequest()), r.NotMod.res.RPS(), r.NotMod.res.Errors,
			r.Anon.res.RPS(), us(r.Anon.perRequest()), 100*r.recordingOverhead())
		out.Rounds = append(out.Rounds, r)
		out.Recorded.Evaluations += r.Single.warm + r.Single.res.Requests
	}
	out.Recorded.Evaluations++          // the first check
	time.Sleep(2500 * time.Millisecond) // the recorder's flush interval is 1 s
	if m1, err := scrape(addr); err == nil {
		out.Dropped = m1["switchyard_ofrep_impressions_dropped_total"] - m0["switchyard_ofrep_impressions_dropped_total"]
	}
	if err := countRecorded(ctx, fx, &out.Recorded); err != nil {
		return err
	}

	// Latency, one connection in sequence.
	for _, s := range []struct {
		name string
		p    *proc
		req  []byte
		want int
		size int
	}{
		{"bare handler (fixed 120 B)", base, bareReq, http.StatusOK, len(fixedBody)},
		{"OFREP single flag", sy, singleReq, http.StatusOK, out.SingleBytes},
		{fmt.Sprintf("OFREP bulk, %d flags", out.BulkFlags), sy, bulkReq, http.StatusOK, out.BulkBytes},
		{"OFREP bulk 304 (If-None-Match)", sy, notModReq, http.StatusNotModified, 0},
	} {
		if _, err := sequential(ctx, s.p.addr, s.req, s.want, max(100, o.seqRequests/10)); err != nil { // warm-up
			return fmt.Errorf("%s: %w", s.name, err)
		}
		stopPerf := func() {}
		if strings.Contains(s.name, "bulk,") {
			stopPerf = perfRecord(o.perfDir, "ofrep-bulk", s.p.pid())
		}
		c0 := cpuTime(s.p.pid())
		lat, err := sequential(ctx, s.p.addr, s.req, s.want, o.seqRequests)
		cpu := cpuTime(s.p.pid()) - c0
		stopPerf()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		l := ofrepLatency{Name: s.name, Lat: lat, CPU: cpu, Bytes: s.size}
		out.Seq = append(out.Seq, l)
		log.Printf("[ofrep] %s, %d in sequence: p50 %s, p90 %s, p99 %s; server CPU %s per request", s.name, len(lat),
			us(pct(lat, 0.5)), us(pct(lat, 0.9)), us(pct(lat, 0.99)), us(l.cpuPer()))
	}

	if o.ofrepStreams {
		if err := ofrepStreams(ctx, o, sy, fx, &out); err != nil {
			return err
		}
	}
	printOFREP(os.Stdout, o, out)
	return nil
}

// countRecorded reads what the single-flag load left in the snapshot
// environment: impressions, summary rows and the evaluations they count.
func countRecorded(ctx context.Context, fx *fixture, r *ofrepRecorded) error {
	conn, err := pgx.Connect(ctx, fx.DBURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM impressions WHERE environment_id = $1`, fx.SnapEnv).Scan(&r.Impressions); err != nil {
		return fmt.Errorf("count impressions: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*), coalesce(sum(count), 0) FROM impression_summaries WHERE environment_id = $1`, fx.SnapEnv).
		Scan(&r.Rows, &r.Sums); err != nil {
		return fmt.Errorf("count summaries: %w", err)
	}
	return nil
}

// ofrepStreams opens both fleets and alternates the broadcasts.
func ofrepStreams(ctx context.Context, o options, sy *proc, fx *fixture, out *ofrepResults) error {
	addr := sy.addr
	if _, err := api(ctx, addr, fx.Token, http.MethodPost, "/api/environments/"+fx.DevEnv.String()+"/flags",
		map[string]any{"key": ofrepFlag, "is_enabled": true, "rollout_percentage": 5, "client_side": true, "description": "bench/stream OFREP event-stream flag"}, nil); err != nil {
		return err
	}
	// The event stream's URL, as the web provider learns it.
	_, body, err := checkOFREP(ctx, addr, "/ofrep/v1/evaluate/flags", fx.DevClientKey, "", http.StatusOK)
	if err != nil {
		return err
	}
	var bulk struct {
		EventStreams []struct {
			URL string `json:"url"`
		} `json:"eventStreams"`
	}
	if err := json.Unmarshal(body, &bulk); err != nil || len(bulk.EventStreams) == 0 {
		return fmt.Errorf("bulk answer without eventStreams (%v): %s", err, body)
	}
	u, err := url.Parse(bulk.EventStreams[0].URL)
	if err != nil {
		return err
	}
	eventsPath := u.RequestURI()

	out.Stream = streamResult{Name: "/stream (production, server key)", Clients: o.clients}
	out.Events = streamResult{Name: "OFREP event stream (development, client key)", Clients: o.clients}
	stopPerf := perfRecord(o.perfDir, "broadcasts", sy.pid())
	defer stopPerf()
	// The fleets take turns (ABBA…), each open alone with -clients
	// connections: the two at once would need twice the file descriptors.
	// Short turns (-ofrep-turn broadcasts, default 1) keep the machine's
	// other load from landing on one fleet's broadcasts only: the medians
	// then compare like with like.
	per := max(1, o.ofrepTurn)
	for phase := range 2 * max(1, (o.runs+per-1)/per) {
		ofrep := phase%4 == 1 || phase%4 == 2
		if err := ofrepPhase(ctx, o, sy, fx, out, ofrep, eventsPath, per); err != nil {
			return err
		}
	}
	return nil
}

// ofrepPhase opens one fleet (/stream or OFREP event streams), times n
// broadcasts to it, and closes it.
func ofrepPhase(ctx context.Context, o options, sy *proc, fx *fixture, out *ofrepResults, ofrep bool, eventsPath string, n int) error {
	addr := sy.addr
	r, cpus := &out.Stream, &out.StreamCPU
	path, bearer, marker := "/stream", fx.ProdKey, "version"
	if ofrep {
		r, cpus = &out.Events, &out.EventsCPU
		path, bearer, marker = eventsPath, "", ""
	}
	log.Printf("[%s] opening %d streams", r.Name, o.clients)
	f, took, err := openFleet(ctx, []string{addr}, path, bearer, marker, o.clients, o.parallel, o.readyTimeout)
	defer func() {
		start := time.Now()
		f.close()
		log.Printf("[%s] closed %d streams in %s", r.Name, o.clients, time.Since(start).Round(time.Millisecond))
	}()
	if err != nil {
		return fmt.Errorf("%s: %w", r.Name, err)
	}
	r.ConnectTime = max(r.ConnectTime, took)
	log.Printf("[%s] %d streams ready in %s", r.Name, o.clients, took.Round(time.Millisecond))
	time.Sleep(o.settle)
	for i := range n {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		run := len(r.Runs)
		want := f.updates.Load() + int64(o.clients)
		c0 := cpuTime(sy.pid())
		sent := time.Now()
		var val int64
		var err error
		if ofrep {
			_, err = patchFlagIn(ctx, addr, fx.Token, fx.DevEnv, ofrepFlag, 10+run%80)
			val = int64(i + 1) // the (i+1)-th refetchEvaluation each stream of this fleet reads
		} else {
			val, err = patchFlag(ctx, addr, fx, 10+run%80)
		}
		rtt := time.Since(sent)
		if err != nil {
			return fmt.Errorf("%s: broadcast %d: %w", r.Name, run+1, err)
		}
		b := f.collect(ctx, want, val, sent, o.runTimeout)
		b.RTT = rtt
		*cpus = append(*cpus, cpuTime(sy.pid())-c0)
		r.Runs = append(r.Runs, b)
		log.Printf("[%s] broadcast %d: received %d/%d, PATCH round trip %s, first %s, p50 %s, p99 %s, max %s", r.Name, run+1, b.Received, b.Expected,
			ms(b.RTT), ms(b.Min), ms(b.P50), ms(b.P99), ms(b.Max))
		time.Sleep(o.settle / 2)
	}
	if n := f.failed.Load(); n > 0 {
		return fmt.Errorf("%s: %d streams ended during the broadcasts: %v", r.Name, n, f.firstEr)
	}
	return nil
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }

func sumLoads(rounds []ofrepRound, of func(ofrepRound) ofrepLoad) (loadResult, time.Duration, time.Duration) {
	var r loadResult
	var cpu, pg time.Duration
	for _, x := range rounds {
		l := of(x)
		r.Requests += l.res.Requests
		r.Errors += l.res.Errors
		r.Elapsed += l.res.Elapsed
		r.Bytes = l.res.Bytes
		cpu += l.cpu
		pg += l.pg
	}
	return r, cpu, pg
}

func printOFREP(w io.Writer, o options, r ofrepResults) {
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "\n# bench/stream -mode ofrep (%s, %d CPUs, %s, load average at the end %s)\n\n",
		host, runtime.NumCPU(), runtime.Version(), strings.Join(strings.Fields(string(load))[:3], " "))

	fmt.Fprintf(w, "Closed loop: %d connections, %s per target and round, POST with a %d-byte body (recorded: %d bytes, not recorded: %d).\n\n",
		o.snapConns, o.snapDuration, len(ofrepBody), len(ofrepUserBody(0)), len(ofrepAnonBody(0)))
	fmt.Fprintln(w, "| Target (round) | Status, body | Requests/s | Errors | Server CPU | PostgreSQL CPU | Server + PostgreSQL CPU / request |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for i, x := range r.Rounds {
		for _, t := range []struct {
			n, st string
			l     ofrepLoad
		}{{"bare net/http handler", "200, fixed 120 B", x.Bare},
			{fmt.Sprintf("OFREP single flag (server key, %d repeat users: recorded)", o.ofrepUsers), fmt.Sprintf("200, %d B", r.SingleBytes), x.Single},
			{"OFREP bulk, If-None-Match current (client key)", "304, none", x.NotMod},
			{fmt.Sprintf("OFREP single flag, the same %d users in an attribute, empty targetingKey (nothing recorded)", o.ofrepUsers), fmt.Sprintf("200, %d B", r.SingleBytes), x.Anon}} {
			el := t.l.res.Elapsed.Seconds()
			fmt.Fprintf(w, "| %s (%d) | %s | %.0f | %d | %.0f %% | %.0f %% | %.1f µs |\n", t.n, i+1, t.st, t.l.res.RPS(), t.l.res.Errors,
				100*t.l.cpu.Seconds()/el, 100*t.l.pg.Seconds()/el, float64(t.l.perRequest())/1e3)
		}
	}
	rc := r.Recorded
	fmt.Fprintf(w, "\nRecorded from the %d single-flag evaluations with a targetingKey (warm-ups included; and up to one request per connection"+
		" answered as a load ended, not counted by the tool): %d impressions (first exposures) + %d evaluations in %d summary rows = %d; %.0f not recorded (full queue).\n\n",
		rc.Evaluations, rc.Impressions, rc.Sums, rc.Rows, rc.Impressions+rc.Sums, r.Dropped)
	fmt.Fprintln(w, "| Round | Recorded: server / PostgreSQL CPU per request | Not recorded: server / PostgreSQL | Recording adds |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for i, x := range r.Rounds {
		per := func(l ofrepLoad, d time.Duration) string {
			return fmt.Sprintf("%.1f µs", float64(d)/float64(max(1, l.res.Requests))/1e3)
		}
		fmt.Fprintf(w, "| %d | %s / %s | %s / %s | %+.1f %% |\n", i+1, per(x.Single, x.Single.cpu), per(x.Single, x.Single.pg),
			per(x.Anon, x.Anon.cpu), per(x.Anon, x.Anon.pg), 100*x.recordingOverhead())
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "One connection, %d requests in sequence each (loopback; the latency bounds the server's time from above):\n\n", o.seqRequests)
	fmt.Fprintln(w, "| Request | Answer | p50 | p90 | p99 | max | Server CPU / request |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, l := range r.Seq {
		fmt.Fprintf(w, "| %s | %d B | %s | %s | %s | %s | %s |\n", l.Name, l.Bytes, us(pct(l.Lat, 0.5)), us(pct(l.Lat, 0.9)), us(pct(l.Lat, 0.99)), us(l.Lat[len(l.Lat)-1]), us(l.cpuPer()))
	}

	if len(r.Events.Runs) > 0 {
		fmt.Fprintf(w, "\nBroadcasts: %d /stream connections and %d OFREP event streams, taking turns on one instance (ABBA, %d broadcasts per turn), %d broadcasts each:\n\n",
			r.Stream.Clients, r.Events.Clients, max(1, o.ofrepTurn), len(r.Events.Runs))
		fmt.Fprintln(w, "| Fleet | Connect+ready (slowest turn) | p50 per run (ms) | p99 per run (ms) | max per run (ms) | Median p99 | Median max | Server CPU per broadcast (median) | Received |")
		fmt.Fprintln(w, "|---|---:|---|---|---|---:|---:|---:|---|")
		for _, x := range []struct {
			s    streamResult
			cpus []time.Duration
		}{{r.Stream, r.StreamCPU}, {r.Events, r.EventsCPU}} {
			var p50s, p99s, maxs []string
			for _, b := range x.s.Runs {
				p50s = append(p50s, fmt.Sprintf("%.0f", float64(b.P50)/1e6))
				p99s = append(p99s, fmt.Sprintf("%.0f", float64(b.P99)/1e6))
				maxs = append(maxs, fmt.Sprintf("%.0f", float64(b.Max)/1e6))
			}
			recv := "all"
			if !x.s.AllReceived() {
				recv = "NOT all"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", x.s.Name, x.s.ConnectTime.Round(time.Millisecond),
				strings.Join(p50s, ", "), strings.Join(p99s, ", "), strings.Join(maxs, ", "), ms(x.s.MedianP99()), ms(medianMax(x.s)),
				ms(medianDur(x.cpus)), recv)
		}
	}
	fmt.Fprintln(w, "\n| Target | Measured | Ratio | Verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	bare, _, _ := sumLoads(r.Rounds, func(x ofrepRound) ofrepLoad { return x.Bare })
	single, _, _ := sumLoads(r.Rounds, func(x ofrepRound) ofrepLoad { return x.Single })
	nm, _, _ := sumLoads(r.Rounds, func(x ofrepRound) ofrepLoad { return x.NotMod })
	if bare.Requests > 0 {
		ratio := single.RPS() / bare.RPS()
		fmt.Fprintf(w, "| single flag ≥ 60 %% of the bare handler's requests/s | %.0f vs %.0f req/s | %.0f %% | %s |\n",
			single.RPS(), bare.RPS(), 100*ratio, verdict(ratio >= 0.60 && single.Errors == 0))
		ratio = nm.RPS() / bare.RPS()
		fmt.Fprintf(w, "| 304 bulk poll ≥ 80 %% of the bare handler's requests/s | %.0f vs %.0f req/s | %.0f %% | %s |\n",
			nm.RPS(), bare.RPS(), 100*ratio, verdict(ratio >= 0.80 && nm.Errors == 0))
		anon, _, _ := sumLoads(r.Rounds, func(x ofrepRound) ofrepLoad { return x.Anon })
		fmt.Fprintf(w, "| (no target) single flag with nothing recorded | %.0f vs %.0f req/s | %.0f %% | - |\n",
			anon.RPS(), bare.RPS(), 100*anon.RPS()/bare.RPS())
		overheads := make([]float64, len(r.Rounds))
		for i, x := range r.Rounds {
			overheads[i] = x.recordingOverhead()
		}
		slices.Sort(overheads)
		med := overheads[len(overheads)/2]
		fmt.Fprintf(w, "| recording repeat users adds ≤ 10 %% server + PostgreSQL CPU per request (median of %d rounds) | %s | %+.1f %% | %s |\n",
			len(overheads), strings.Join(pctList(overheads), ", "), 100*med, verdict(med <= 0.10 && single.Errors == 0))
		_, sc, sp := sumLoads(r.Rounds, func(x ofrepRound) ofrepLoad { return x.Single })
		_, ac, ap := sumLoads(r.Rounds, func(x ofrepRound) ofrepLoad { return x.Anon })
		recorded := float64(sc+sp) / float64(single.Requests)
		off := float64(ac+ap) / float64(anon.Requests)
		fmt.Fprintf(w, "| (the same over every round together) | %.1f vs %.1f µs per request | %+.1f %% | - |\n",
			recorded/1e3, off/1e3, 100*(recorded/off-1))
	}
	for _, l := range r.Seq {
		if strings.Contains(l.Name, "bulk,") {
			p50 := pct(l.Lat, 0.5)
			fmt.Fprintf(w, "| bulk of %d flags, p50 < 1 ms of server time (client-side latency, one connection in sequence) | p50 %s (server CPU %s per request) | - | %s |\n",
				r.BulkFlags, us(p50), us(l.cpuPer()), verdict(p50 < time.Millisecond))
		}
	}
	if len(r.Stream.Runs) > 0 && len(r.Events.Runs) > 0 {
		ratio := float64(r.Events.MedianP99()) / float64(r.Stream.MedianP99())
		fmt.Fprintf(w, "| OFREP events ≤ 1.2 × /stream, median p99 | %s vs %s | %.2f × | %s |\n", ms(r.Events.MedianP99()), ms(r.Stream.MedianP99()), ratio,
			verdict(ratio <= 1.2 && r.Events.AllReceived()))
		ratio = float64(medianMax(r.Events)) / float64(medianMax(r.Stream))
		fmt.Fprintf(w, "| OFREP events ≤ 1.2 × /stream, median max (PATCH to the last refetchEvaluation) | %s vs %s | %.2f × | %s |\n",
			ms(medianMax(r.Events)), ms(medianMax(r.Stream)), ratio, verdict(ratio <= 1.2 && r.Events.AllReceived()))
	}
}

func pctList(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%+.1f %%", 100*x)
	}
	return out
}

func medianMax(s streamResult) time.Duration {
	return s.median(func(b broadcastResult) time.Duration { return b.Max })
}

func medianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	c := slices.Clone(ds)
	slices.Sort(c)
	return c[len(c)/2]
}
