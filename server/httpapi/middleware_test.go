package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/metrics"
)

// Metrics labels come from a fixed set: a client choosing URLs must not
// create label values.
func TestRouteNameIsBounded(t *testing.T) {
	for path, want := range map[string]string{
		"/health":                           "/health",
		"/api/docs":                         "/api/docs",
		"/api/whatever/123":                 "/api/(unmatched)",
		"/ofrep/v1/evaluate/flags":          "/ofrep/v1/evaluate/flags",
		"/ofrep/v1/evaluate/flags/any-flag": "/ofrep/v1/evaluate/flags/{key}",
		"/ofrep/v1/configuration":           "/ofrep/v1/configuration",
		"/ofrep/v1/events":                  "/ofrep/v1/events",
		"/ofrep/v1/made-up-123":             "/ofrep/(unmatched)",
		"/settings/keys":                    "/(dashboard)",
	} {
		if got := routeName(path, &routeLabel{}); got != want {
			t.Errorf("routeName(%q) = %q, want %q", path, got, want)
		}
	}
}

// scrapeMetrics returns the text exposition of m.
func scrapeMetrics(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// The access middleware reuses its recorders and gives only API requests a
// route label: neither may leak one request's status, label or writer into
// the next.
func TestLogRequests(t *testing.T) {
	var logged bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	m := metrics.New()
	h := logRequests(logger, m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, hasLabel := r.Context().Value(routeLabelKey{}).(*routeLabel)
		if hasLabel != strings.HasPrefix(r.URL.Path, "/api/") {
			t.Errorf("%s: route label present %v", r.URL.Path, hasLabel)
		}
		switch r.URL.Path {
		case "/api/flags/x":
			l.name = "/api/flags/{key}" // what findRoute does
			w.WriteHeader(http.StatusTeapot)
		case "/ofrep/v1/evaluate/flags":
			w.WriteHeader(http.StatusNotModified)
		case "/ofrep/v1/evaluate/flags/gone":
			w.WriteHeader(http.StatusNotFound)
		case "/stream":
			// Streams reach the real writer's Flush through Unwrap.
			_, _ = w.Write([]byte("data: x\n\n"))
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Errorf("flush: %v", err)
			}
		case "/health":
			// Writes nothing: net/http answers 200.
		}
	}))
	serve := func(method, path, id string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for range 3 {
		if rec := serve(http.MethodPost, "/api/flags/x", "caller-id_1"); rec.Code != http.StatusTeapot || rec.Header().Get("X-Request-Id") != "caller-id_1" {
			t.Fatalf("api: %d, id %q", rec.Code, rec.Header().Get("X-Request-Id"))
		}
		serve(http.MethodPost, "/ofrep/v1/evaluate/flags", "")
		serve(http.MethodPost, "/ofrep/v1/evaluate/flags/gone", "")
		if rec := serve(http.MethodGet, "/stream", "bad id!"); !rec.Flushed {
			t.Fatal("stream not flushed")
		}
		serve(http.MethodGet, "/health", "")
	}
	ids := map[string]bool{}
	for range 100 {
		id := serve(http.MethodGet, "/health", "").Header().Get("X-Request-Id")
		if !saneRequestID(id) || len(id) != 16 || ids[id] {
			t.Fatalf("generated request id %q: not 16 sane characters, or repeated", id)
		}
		ids[id] = true
	}

	text := scrapeMetrics(t, m)
	for _, want := range []string{
		`switchyard_http_request_duration_seconds_count{method="POST",route="/api/flags/{key}",status="418"} 3`,
		`switchyard_http_request_duration_seconds_count{method="POST",route="/ofrep/v1/evaluate/flags",status="304"} 3`,
		`switchyard_http_request_duration_seconds_count{method="GET",route="/stream",status="200"} 3`,
		`switchyard_http_request_duration_seconds_count{method="GET",route="/health",status="200"} 103`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `status="0"`) {
		t.Error("a request counted with status 0")
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	// At info, the data plane's answered requests (the 304s) are not
	// logged; its failures (the 404s) are, like every other request.
	if len(lines) != 112 || strings.Contains(logged.String(), `"status":304`) || strings.Count(logged.String(), `"status":404`) != 3 {
		t.Fatalf("%d access-log lines, want 112 without the OFREP 304s and with its 404s:\n%s", len(lines), logged.String())
	}
	var first struct {
		RequestID string `json:"request_id"`
		Method    string `json:"method"`
		Path      string `json:"path"`
		Status    int    `json:"status"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.RequestID != "caller-id_1" || first.Method != "POST" || first.Path != "/api/flags/x" || first.Status != http.StatusTeapot {
		t.Errorf("first log line %+v", first)
	}
}

// The access log's cost on a route that is not the API's: what every OFREP
// request pays on top of its handler.
func BenchmarkLogRequests(b *testing.B) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := logRequests(logger, metrics.New())(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	}))
	req := httptest.NewRequest(http.MethodPost, "/ofrep/v1/evaluate/flags", nil)
	w := discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d discardWriter) WriteHeader(int)             {}
