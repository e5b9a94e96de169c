package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The header values are shared by every response: a handler that adds to
// one of those headers changes its own response only.
func TestSecureHeadersAreNotShared(t *testing.T) {
	h := secureHeaders(true)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Add("X-Content-Type-Options", "other")
		w.Header().Add("Strict-Transport-Security", "other")
		setPageHeaders(w.Header())
		w.Header().Add("Content-Security-Policy", "other")
	}))
	for range 2 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if got := rec.Header().Values("X-Content-Type-Options"); len(got) != 2 || got[0] != "nosniff" {
			t.Fatalf("X-Content-Type-Options = %q", got)
		}
	}
	for name, v := range map[string][]string{"nosniff": nosniffHeader, "hsts": hstsHeader, "csp": cspHeader} {
		if len(v) != 1 {
			t.Errorf("%s's shared value became %q", name, v)
		}
	}
}

// What the headers every response carries cost each OFREP request, on top
// of its handler (against "none", the handler alone): a map store or two,
// no allocation.
func BenchmarkSecureHeaders(b *testing.B) {
	contentType := []string{"application/json"}
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = contentType
		w.WriteHeader(http.StatusOK)
	})
	for name, h := range map[string]http.Handler{
		"none": handler, "nosniff": secureHeaders(false)(handler), "nosniff+hsts": secureHeaders(true)(handler),
	} {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "/ofrep/v1/evaluate/flags", nil)
			w := discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}
