package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// loadResult is one closed-loop run.
type loadResult struct {
	Requests int64
	Errors   int64
	Elapsed  time.Duration
	Bytes    int64 // body bytes of the last response
}

func (r loadResult) RPS() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// closedLoop drives GET path on addr with conns keep-alive connections, each
// sending its next request as soon as the previous response is read, for d.
// It speaks HTTP/1.1 over raw connections (pre-built request bytes, the
// head parsed by hand, the body discarded by Content-Length) so that the
// generator costs as little CPU as possible on a machine it shares with the
// server under test.
func closedLoop(ctx context.Context, addr, path, bearer, acceptEncoding string, conns int, d time.Duration) (loadResult, error) {
	var hdr []string
	if bearer != "" {
		hdr = append(hdr, "Authorization: Bearer "+bearer)
	}
	if acceptEncoding != "" {
		hdr = append(hdr, "Accept-Encoding: "+acceptEncoding)
	}
	return closedLoopReq(ctx, addr, rawRequest(http.MethodGet, addr, path, hdr, nil), http.StatusOK, conns, d)
}

// rawRequest builds one HTTP/1.1 request, sent as is on every iteration:
// header lines without their CRLF, and a body (with its Content-Length)
// when body is not nil.
func rawRequest(method, addr, path string, header []string, body []byte) []byte {
	req := []byte(method + " " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n")
	for _, h := range header {
		req = append(req, h+"\r\n"...)
	}
	if body != nil {
		req = append(req, "Content-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n"...)
	}
	req = append(req, "\r\n"...)
	return append(req, body...)
}

// closedLoopReq is closedLoop with a pre-built request (rawRequest) and the
// status every response must have (200, or 304 for a conditional poll).
func closedLoopReq(ctx context.Context, addr string, req []byte, want, conns int, d time.Duration) (loadResult, error) {
	return closedLoopReqs(ctx, addr, [][]byte{req}, want, conns, d)
}

// closedLoopReqs is closedLoopReq with several requests, which each
// connection sends in turn, starting at its own place (the OFREP load of
// many users).
func closedLoopReqs(ctx context.Context, addr string, reqs [][]byte, want, conns int, d time.Duration) (loadResult, error) {
	var total, errs, lastLen atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, bodyLen, err := loadConn(ctx, addr, reqs, c*len(reqs)/max(1, conns), want)
			total.Add(n)
			if bodyLen > 0 {
				lastLen.Store(bodyLen)
			}
			if err != nil && ctx.Err() == nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	res := loadResult{Requests: total.Load(), Errors: errs.Load(), Elapsed: time.Since(start), Bytes: lastLen.Load()}
	if e, ok := firstErr.Load().(error); ok {
		return res, e
	}
	return res, nil
}

// loadConn runs one connection's loop until ctx ends, sending reqs in
// turn from reqs[first]; it reconnects once per failure, up to a few times.
func loadConn(ctx context.Context, addr string, reqs [][]byte, first, want int) (n, bodyLen int64, err error) {
	var conn net.Conn
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	var br *bufio.Reader
	failures := 0
	for ctx.Err() == nil {
		if conn == nil {
			conn, err = net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return n, bodyLen, err
			}
			br = bufio.NewReaderSize(conn, 64<<10)
			go func(c net.Conn) { <-ctx.Done(); _ = c.SetDeadline(time.Now()) }(conn)
		}
		if _, err = conn.Write(reqs[(first+int(n))%len(reqs)]); err == nil {
			var status int
			var l int64
			status, l, err = readResponse(br)
			if err == nil && status != want {
				err = fmt.Errorf("status %d", status)
			}
			if err == nil {
				bodyLen = l
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return n, bodyLen, nil
			}
			failures++
			_ = conn.Close()
			conn = nil
			if failures > 3 {
				return n, bodyLen, err
			}
			continue
		}
		n++
	}
	return n, bodyLen, nil
}

// readResponse reads one response head and discards its body, which must
// have a Content-Length unless the status has no body (1xx, 204, 304).
func readResponse(br *bufio.Reader) (status int, bodyLen int64, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	length := int64(-1)
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		if len(line) <= 2 {
			break
		}
		if len(line) > 16 && bytes.EqualFold(line[:15], []byte("Content-Length:")) {
			length, err = strconv.ParseInt(string(bytes.TrimSpace(line[15:])), 10, 64)
			if err != nil {
				return 0, 0, err
			}
		}
	}
	if status == http.StatusNotModified || status == http.StatusNoContent || status < 200 {
		return status, 0, nil
	}
	if length < 0 {
		return 0, 0, fmt.Errorf("response without Content-Length")
	}
	if _, err := br.Discard(int(length)); err != nil {
		return 0, 0, err
	}
	return status, length, nil
}

// sequential sends req n times on one keep-alive connection, each after the
// previous response, and returns the sorted latencies (request written to
// response read). On loopback this bounds the server's time per request
// from above. It stops early at ctx's end.
func sequential(ctx context.Context, addr string, req []byte, want, n int) ([]time.Duration, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	br := bufio.NewReaderSize(conn, 64<<10)
	lat := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := conn.Write(req); err != nil {
			return nil, err
		}
		status, _, err := readResponse(br)
		if err != nil {
			return nil, err
		}
		if status != want {
			return nil, fmt.Errorf("status %d, want %d", status, want)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return lat, nil
}
