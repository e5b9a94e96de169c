package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/metrics"
)

// maxBodyBytes is the request body limit: 1 MiB, 413 beyond
// (docs/reference/errors.md, Too large).
const maxBodyBytes = 1 << 20

// statusRecorder remembers the status a handler wrote, for the access log.
// Unwrap lets http.ResponseController reach the real writer's Flush and
// deadlines, which the stream needs.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// routeLabel is filled in by findRoute with the document's path template,
// so that metrics group requests by route rather than by URL.
type routeLabel struct{ name string }

type routeLabelKey struct{}

// apiPrefix is where findRoute runs: the API chain is mounted under it and
// nowhere else, so only these requests carry a routeLabel.
const apiPrefix = "/api/"

// logRequests gives each request an ID (kept from X-Request-Id when the
// caller sends a sane one), writes one access-log line when it ends, and
// observes its duration by route, method and status.
//
// It runs for every request, the OFREP polls included, so it costs as little
// as it can: recorders are reused, and only API requests, whose route
// findRoute fills in, get a context value (and with it a copy of the
// request); every other route's label follows from its path.
func logRequests(logger *slog.Logger, m *metrics.Metrics) func(http.Handler) http.Handler {
	// A recorder is back in the pool once the handler has returned, when
	// net/http forbids using its writer.
	recorders := sync.Pool{New: func() any { return new(statusRecorder) }}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get("X-Request-Id")
			if !saneRequestID(id) {
				id = newRequestID()
			}
			w.Header()["X-Request-Id"] = []string{id} // canonical already
			rec := recorders.Get().(*statusRecorder)
			rec.ResponseWriter, rec.status = w, 0
			var label *routeLabel // nil outside the API
			if strings.HasPrefix(r.URL.Path, apiPrefix) {
				label = &routeLabel{}
				next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), routeLabelKey{}, label)))
			} else {
				next.ServeHTTP(rec, r)
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK // net/http's answer when a handler writes nothing
			}
			rec.ResponseWriter = nil
			recorders.Put(rec)
			elapsed := time.Since(start)
			// Enabled first: the record is not built when the level drops it.
			level := accessLogLevel(r.URL.Path, status)
			if ctx := r.Context(); logger.Enabled(ctx, level) {
				logger.LogAttrs(ctx, level, "http request",
					slog.String("request_id", id),
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					slog.Int("status", status),
					slog.Duration("duration", elapsed),
				)
			}
			m.ObserveHTTP(routeName(r.URL.Path, label), r.Method, status, elapsed)
		})
	}
}

// accessLogLevel is the level of a request's access-log line: debug for
// the answered requests of the SDK data plane (remote evaluation and the
// snapshot), which browsers and services send at rates no one reads line by
// line and whose volume and latency /metrics already reports; info for
// everything else and for every failure there.
func accessLogLevel(path string, status int) slog.Level {
	if status < http.StatusBadRequest && (strings.HasPrefix(path, "/ofrep/") || path == "/flags/snapshot") {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// routeName is the metrics label of a request: the document's path template
// for API operations, the path for the fixed hand-written routes, and one
// label for everything else, so URLs never explode the label set. l is nil
// for requests outside the API.
func routeName(path string, l *routeLabel) string {
	switch {
	case l != nil && l.name != "":
		return l.name
	case path == "/health" || path == "/stream" || path == "/flags/snapshot" || path == "/metrics" || path == "/api/openapi.json" || path == "/api/docs":
		return path
	case path == "/ofrep/v1/evaluate/flags" || path == "/ofrep/v1/configuration" || path == "/ofrep/v1/events":
		return path
	case strings.HasPrefix(path, "/ofrep/v1/evaluate/flags/"):
		return "/ofrep/v1/evaluate/flags/{key}"
	case strings.HasPrefix(path, "/ofrep/"):
		return "/ofrep/(unmatched)"
	case strings.HasPrefix(path, "/api/"):
		return "/api/(unmatched)"
	}
	return "/(dashboard)"
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var h [16]byte
	hex.Encode(h[:], b[:])
	return string(h[:])
}

// recoverPanics turns a panic in a handler into a logged 500, so one bad
// request never takes the process down.
func recoverPanics(errs errorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					errs.write(w, r, apperr.Wrap(apperr.Internal, "", fmt.Errorf("panic: %v", v)))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// limitBody caps request bodies at 1 MiB; reading past it fails with
// *http.MaxBytesError, which the error writer answers with 413.
func limitBody(errs errorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > maxBodyBytes {
				errs.write(w, r, &http.MaxBytesError{Limit: maxBodyBytes})
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
			next.ServeHTTP(w, r)
		})
	}
}

// chain wraps h in middlewares; the first one listed runs first.
func chain(h http.Handler, middlewares ...func(http.Handler) http.Handler) http.Handler {
	for i := len(middlewares) - 1; i >= 0; i-- {
		h = middlewares[i](h)
	}
	return h
}
