package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/apperr"
)

var errDown = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func testErrorWriter() errorWriter {
	return errorWriter{
		logger:      slog.New(slog.DiscardHandler),
		unreachable: func(err error) bool { return errors.Is(err, errDown) },
	}
}

// checkOutageAnswer fails unless rec holds a 503 with Retry-After and a JSON
// error body.
func checkOutageAnswer(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status = %d %s, want 503", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q, want 5", got)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] != apperr.DatabaseUnavailable(nil).Message {
		t.Errorf("body = %s (%v), want the database-unavailable message", rec.Body, err)
	}
}

func TestErrorWriterAnswersAnOutageWith503(t *testing.T) {
	t.Parallel()
	ew := testErrorWriter()
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"wrapped by fmt (Internal)", fmt.Errorf("look up token: %w", errDown)},
		{"inside a credential error", apperr.Wrap(apperr.Unauthenticated, "invalid credentials", errDown)},
		{"inside a not-found error", apperr.Wrap(apperr.NotFound, "not found", fmt.Errorf("get flag: %w", errDown))},
		{"already Unavailable", apperr.DatabaseUnavailable(errDown)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			ew.write(rec, httptest.NewRequest("GET", "/api/projects", nil), tt.err)
			checkOutageAnswer(t, rec)
		})
	}
	t.Run("a malformed body stays 400", func(t *testing.T) {
		t.Parallel()
		rec := httptest.NewRecorder()
		// A truncated body ends in io.ErrUnexpectedEOF, like a dropped
		// database connection; the classifier here says so too.
		ew.write(rec, httptest.NewRequest("POST", "/api/projects", nil), &jsonSyntaxError{errDown})
		if rec.Code != http.StatusBadRequest {
			t.Errorf("status = %d %s, want 400", rec.Code, rec.Body)
		}
	})
	t.Run("other errors keep their status", func(t *testing.T) {
		t.Parallel()
		rec := httptest.NewRecorder()
		ew.write(rec, httptest.NewRequest("GET", "/api/projects", nil), apperr.E(apperr.Unauthenticated, "invalid credentials"))
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("Retry-After") != "" {
			t.Errorf("status = %d, Retry-After %q; want 401 without", rec.Code, rec.Header().Get("Retry-After"))
		}
	})
}

func TestHealthPingsTheDatabaseAtMostOncePerTTL(t *testing.T) {
	t.Parallel()
	var pings atomic.Int32
	var down atomic.Bool
	h := &healthHandler{errs: testErrorWriter(), ttl: time.Hour, ping: func(context.Context) error {
		pings.Add(1)
		if down.Load() {
			return errDown
		}
		return nil
	}}
	get := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
		return rec
	}

	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rec := get(); rec.Code != http.StatusOK || rec.Body.String() != "OK" {
				t.Errorf("GET /health = %d %q, want 200 OK", rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	// Only probes that found nothing cached may ping together; once a
	// result is cached, none ping within the TTL.
	first := pings.Load()
	for range 50 {
		get()
	}
	if got := pings.Load(); got != first {
		t.Errorf("pings = %d after the first burst, %d after 50 more within the TTL; want no more", first, got)
	}

	// A stale result is refreshed, and a failed ping answers 503.
	down.Store(true)
	h.last.Store(&healthResult{}) // long expired
	rec := get()
	checkOutageAnswer(t, rec)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
}
