// Package sse writes Server-Sent Events responses for the stream handlers
// (/stream and OFREP's event stream): the response head, then chunks written
// and flushed under a write deadline.
package sse

import (
	"net/http"
	"time"
)

// Writer writes one event-stream response.
type Writer struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	timeout  time.Duration
	deadline time.Time
}

// Start writes the head of an event stream (200, text/event-stream, no
// caching, no proxy buffering) and returns the writer for its body. A client
// that cannot take a write within timeout is gone.
func Start(w http.ResponseWriter, timeout time.Duration) *Writer {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &Writer{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

// Write sends chunks with one flush and reports whether the client took
// them. The deadline is renewed only once half of it is spent: setting it
// is a system call on every write otherwise, a measurable share of a
// broadcast to thousands of streams (docs/performance.md), and a write still
// gets at least half the timeout.
func (s *Writer) Write(chunks ...[]byte) bool {
	if now := time.Now(); s.deadline.Sub(now) < s.timeout/2 {
		s.deadline = now.Add(s.timeout)
		_ = s.rc.SetWriteDeadline(s.deadline)
	}
	for _, b := range chunks {
		if _, err := s.w.Write(b); err != nil {
			return false
		}
	}
	return s.rc.Flush() == nil
}
