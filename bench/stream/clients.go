package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// receipt is one update a client read: the number found after the client's
// marker ("version" for Switchyard, "seq" for the baseline) and when.
type receipt struct {
	val int64
	at  time.Time
}

// client is one SSE connection read by its own goroutine.
type client struct {
	conn    net.Conn
	mu      sync.Mutex
	got     []receipt
	readyIn time.Duration // from dialling to reading `ready`
}

// fleet is a set of SSE clients spread over one or more servers.
type fleet struct {
	clients []*client
	ready   atomic.Int64 // clients that have read `ready`
	updates atomic.Int64 // updates read after ready, over all clients
	failed  atomic.Int64 // clients whose stream failed or ended
	errMu   sync.Mutex
	firstEr error
	wg      sync.WaitGroup
}

func (f *fleet) fail(err error) {
	f.failed.Add(1)
	f.errMu.Lock()
	if f.firstEr == nil {
		f.firstEr = err
	}
	f.errMu.Unlock()
}

// openFleet opens n streams, spread round-robin over addrs, with at most
// `parallel` connections being set up at a time, and waits until every one
// has read `ready` (or ctx ends). marker is the JSON field whose integer
// identifies an update ("version" or "seq"); an empty marker reads OFREP
// event streams (-mode ofrep), whose updates are counted instead.
func openFleet(ctx context.Context, addrs []string, path, bearer, marker string, n, parallel int, timeout time.Duration) (*fleet, time.Duration, error) {
	f := &fleet{clients: make([]*client, n)}
	for i := range f.clients {
		f.clients[i] = &client{}
	}
	key := []byte(`"` + marker + `":`)
	start := time.Now()
	sem := make(chan struct{}, parallel)
	for i, c := range f.clients {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return f, 0, ctx.Err()
		}
		addr := addrs[i%len(addrs)]
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.run(c, addr, path, bearer, key, sem)
		}()
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if int(f.ready.Load())+int(f.failed.Load()) >= n {
			break
		}
		select {
		case <-ctx.Done():
			return f, time.Since(start), ctx.Err()
		case <-deadline.C:
			return f, time.Since(start), fmt.Errorf("%d of %d clients ready after %s (%d failed)", f.ready.Load(), n, timeout, f.failed.Load())
		case <-tick.C:
		}
	}
	if f.failed.Load() > 0 {
		return f, time.Since(start), fmt.Errorf("%d of %d streams failed: %v", f.failed.Load(), n, f.firstEr)
	}
	return f, time.Since(start), nil
}

// run dials, sends the request, reads the response head and then the
// event stream, line by line. It releases sem once `ready` is read.
func (f *fleet) run(c *client, addr, path, bearer string, key []byte, sem chan struct{}) {
	released := false
	release := func() {
		if !released {
			released = true
			<-sem
		}
	}
	defer release()
	start := time.Now()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		f.fail(err)
		return
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\n"
	if bearer != "" {
		req += "Authorization: Bearer " + bearer + "\r\n"
	}
	req += "\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		f.fail(err)
		return
	}
	br := bufio.NewReaderSize(conn, 2048)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		f.fail(err)
		return
	}
	if resp.StatusCode != http.StatusOK {
		f.fail(fmt.Errorf("GET %s: status %d", path, resp.StatusCode))
		return
	}
	lines := bufio.NewReaderSize(resp.Body, 2048)
	event := ""
	ready := false
	ofrep := len(key) == len(`"":`)
	for {
		line, err := lines.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				// A long line (a big bootstrap flag): skip its rest.
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = lines.ReadSlice('\n')
				}
				if err == nil {
					continue
				}
			}
			if !closing.Load() {
				f.fail(fmt.Errorf("stream ended: %w", err))
			}
			return
		}
		if ofrep {
			// An OFREP event stream: ready at its first comment, then
			// unnamed refetchEvaluation events that carry no version: the
			// receipt's value is the count of them so far (1, 2, …).
			switch {
			case !ready && bytes.HasPrefix(line, []byte(": connected")):
				ready = true
				c.mu.Lock()
				c.readyIn = time.Since(start)
				c.mu.Unlock()
				f.ready.Add(1)
				release()
			case ready && bytes.HasPrefix(line, []byte("data: ")) && bytes.Contains(line, []byte(`"refetchEvaluation"`)):
				now := time.Now()
				c.mu.Lock()
				c.got = append(c.got, receipt{val: int64(len(c.got) + 1), at: now})
				c.mu.Unlock()
				f.updates.Add(1)
			}
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(bytes.TrimSpace(line[len("event: "):]))
		case bytes.HasPrefix(line, []byte("data: ")):
			switch {
			case event == "ready":
				ready = true
				c.mu.Lock()
				c.readyIn = time.Since(start)
				c.mu.Unlock()
				f.ready.Add(1)
				release()
			case event == "update" && ready:
				now := time.Now()
				val := int64(-1)
				if i := bytes.Index(line, key); i >= 0 {
					val = parseInt(line[i+len(key):])
				}
				c.mu.Lock()
				c.got = append(c.got, receipt{val: val, at: now})
				c.mu.Unlock()
				f.updates.Add(1)
			}
		}
	}
}

// closing is set when the tool closes streams on purpose.
var closing atomic.Bool

func parseInt(b []byte) int64 {
	var v int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			break
		}
		v = v*10 + int64(ch-'0')
	}
	return v
}

// close ends every stream and waits for the readers.
func (f *fleet) close() {
	closing.Store(true)
	for _, c := range f.clients {
		c.mu.Lock()
		if c.conn != nil {
			_ = c.conn.Close()
		}
		c.mu.Unlock()
	}
	f.wg.Wait()
	closing.Store(false)
}

// broadcastResult is one broadcast's delivery over the fleet.
type broadcastResult struct {
	Received int
	Expected int
	Min, P50 time.Duration
	P99, Max time.Duration
	RTT      time.Duration // the trigger request's round trip (PATCH or POST /trigger)
}

// collect waits until every client has an update with value val (or
// timeout), then returns the latencies from sent.
func (f *fleet) collect(ctx context.Context, wantTotal int64, val int64, sent time.Time, timeout time.Duration) broadcastResult {
	deadline := time.Now().Add(timeout)
	for f.updates.Load() < wantTotal && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	lat := make([]time.Duration, 0, len(f.clients))
	for _, c := range f.clients {
		c.mu.Lock()
		for _, r := range c.got {
			if r.val == val {
				lat = append(lat, r.at.Sub(sent))
				break
			}
		}
		c.mu.Unlock()
	}
	slices.Sort(lat)
	res := broadcastResult{Received: len(lat), Expected: len(f.clients)}
	if len(lat) > 0 {
		res.Min = lat[0]
		res.P50 = pct(lat, 0.50)
		res.P99 = pct(lat, 0.99)
		res.Max = lat[len(lat)-1]
	}
	return res
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}
