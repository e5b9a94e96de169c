package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// eventSize is the size of the baseline's pre-encoded update event, frame
// included (docs/performance.md, Streaming: a pre-encoded 512-byte event).
const eventSize = 512

// broadcaster is the bare reference: one goroutine (the handler) and one
// buffered channel per connection, one pre-encoded event per broadcast,
// written and flushed per event.
type broadcaster struct {
	mu    sync.Mutex
	conns map[chan []byte]struct{}
	seq   atomic.Int64
	queue int
	body  atomic.Pointer[[]byte] // fixed snapshot body
	gz    atomic.Pointer[[]byte] // and its gzip form, compressed once on PUT
}

func (b *broadcaster) stream(w http.ResponseWriter, r *http.Request) {
	ch := make(chan []byte, b.queue)
	b.mu.Lock()
	b.conns[ch] = struct{}{}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.conns, ch)
		b.mu.Unlock()
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	if _, err := io.WriteString(w, "event: connected\ndata: {}\n\nevent: ready\ndata: \"0\"\n\n"); err != nil {
		return
	}
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-ch:
			if _, err := w.Write(ev); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// trigger encodes one event, with its send timestamp, and queues the same
// bytes for every connection without blocking.
func (b *broadcaster) trigger(w http.ResponseWriter, _ *http.Request) {
	seq := b.seq.Add(1)
	ev := encodeBaselineEvent(seq, time.Now().UnixNano())
	b.mu.Lock()
	dropped := 0
	for ch := range b.conns {
		select {
		case ch <- ev:
		default:
			dropped++
		}
	}
	n := len(b.conns)
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"seq":%d,"conns":%d,"dropped":%d}`, seq, n, dropped)
}

func encodeBaselineEvent(seq, sentUnixNano int64) []byte {
	head := fmt.Sprintf(`event: update`+"\n"+`data: {"seq":%d,"sent_unix_nano":%d,"pad":"`, seq, sentUnixNano)
	tail := "\"}\n\n"
	pad := eventSize - len(head) - len(tail)
	if pad < 0 {
		pad = 0
	}
	ev := make([]byte, 0, eventSize)
	ev = append(ev, head...)
	for range pad {
		ev = append(ev, 'x')
	}
	return append(ev, tail...)
}

// snapshot serves the fixed body set through PUT, as the bare handler of
// the snapshot comparison.
func (b *broadcaster) snapshot(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		gz := z.Bytes()
		b.body.Store(&body)
		b.gz.Store(&gz)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body := *b.body.Load()
	h := w.Header()
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		body = *b.gz.Load()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// fixedBody is the bare handler's answer in the OFREP comparison (-mode
// ofrep): a fixed JSON object of exactly fixedSize bytes, shaped like one
// OFREP result.
const fixedSize = 120

var fixedBody = func() []byte {
	head := `{"key":"bench-fixed","value":true,"reason":"SPLIT","variant":"true","metadata":{"version":1},"pad":"`
	tail := `"}`
	b := []byte(head)
	for len(b)+len(tail) < fixedSize {
		b = append(b, 'x')
	}
	return append(b, tail...)
}()

// fixed is the bare net/http handler of -mode ofrep: any method, the
// request body read and dropped, the same bytes every time.
func fixed(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(fixedBody)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(fixedBody)
}

// heap reports the Go heap, as Switchyard's /metrics does.
func heap(w http.ResponseWriter, _ *http.Request) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]uint64{"heap_inuse": ms.HeapInuse, "stack_inuse": ms.StackInuse, "sys": ms.Sys, "goroutines": uint64(runtime.NumGoroutine())})
}

// serveBaseline runs the bare server until stdin closes (the parent died or
// stopped it) or a signal ends the process. It prints its address first.
func serveBaseline(queue int) {
	b := &broadcaster{conns: map[chan []byte]struct{}{}, queue: queue}
	empty := []byte("[]")
	b.body.Store(&empty)
	b.gz.Store(&empty)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", b.stream)
	mux.HandleFunc("POST /trigger", b.trigger)
	mux.HandleFunc("/snapshot", b.snapshot)
	mux.HandleFunc("GET /heap", heap)
	mux.HandleFunc("/fixed", fixed)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "OK") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
