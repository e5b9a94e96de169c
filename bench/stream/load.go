package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
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
func closedLoop(ctx context.Context, addr, path, bearer string, conns int, d time.Duration) (loadResult, error) {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n")
	if bearer != "" {
		req = append(req, "Authorization: Bearer "+bearer+"\r\n"...)
	}
	req = append(req, "\r\n"...)

	var total, errs, lastLen atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, bodyLen, err := loadConn(ctx, addr, req)
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

// loadConn runs one connection's loop until ctx ends; it reconnects once
// per failure, up to a few times.
func loadConn(ctx context.Context, addr string, req []byte) (n, bodyLen int64, err error) {
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
		if _, err = conn.Write(req); err == nil {
			var status int
			var l int64
			status, l, err = readResponse(br)
			if err == nil && status != 200 {
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
// have a Content-Length.
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
	if length < 0 {
		return 0, 0, fmt.Errorf("response without Content-Length")
	}
	if _, err := br.Discard(int(length)); err != nil {
		return 0, 0, err
	}
	return status, length, nil
}
