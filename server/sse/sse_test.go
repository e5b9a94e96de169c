package sse

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"
)

// conn is a response writer that records deadlines and can fail.
type conn struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
	broken    bool
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.deadlines = append(c.deadlines, t)
	return nil
}

func (c *conn) Write(b []byte) (int, error) {
	if c.broken {
		return 0, errors.New("broken pipe")
	}
	return c.ResponseRecorder.Write(b)
}

func TestWriterHeadChunksAndDeadlines(t *testing.T) {
	c := &conn{ResponseRecorder: httptest.NewRecorder()}
	w := Start(c, time.Hour)
	if c.Code != 200 || c.Header().Get("Content-Type") != "text/event-stream" || c.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("head = %d %v", c.Code, c.Header())
	}
	for range 3 {
		if !w.Write([]byte("data: 1\n\n"), []byte("data: 2\n\n")) {
			t.Fatal("write failed")
		}
	}
	if got := c.Body.String(); got != "data: 1\n\ndata: 2\n\n"+"data: 1\n\ndata: 2\n\n"+"data: 1\n\ndata: 2\n\n" || !c.Flushed {
		t.Errorf("body %q, flushed %v", got, c.Flushed)
	}
	// Three writes within half the timeout: one deadline, set by the first.
	if len(c.deadlines) != 1 || time.Until(c.deadlines[0]) < 59*time.Minute {
		t.Errorf("deadlines = %v, want one an hour ahead", c.deadlines)
	}
	// Once half is spent, the next write renews it.
	w.deadline = time.Now().Add(20 * time.Minute)
	w.Write([]byte(": keep-alive\n\n"))
	if len(c.deadlines) != 2 {
		t.Errorf("deadlines = %v, want a renewal", c.deadlines)
	}
	c.broken = true
	if w.Write([]byte("data: 3\n\n")) {
		t.Error("a write to a broken connection reported success")
	}
}
