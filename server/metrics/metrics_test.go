package metrics

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// httpCounts gathers the request-duration histogram: observations per
// "route method status".
func httpCounts(t *testing.T, m *Metrics) map[string]uint64 {
	t.Helper()
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "switchyard_http_request_duration_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[l["route"]+" "+l["method"]+" "+l["status"]] = s.GetHistogram().GetSampleCount()
		}
	}
	return out
}

// ObserveHTTP lands in the series the labels name, whether the child comes
// from the cache or not.
func TestObserveHTTPRecordsByRouteMethodStatus(t *testing.T) {
	m := New()
	for range 3 {
		m.ObserveHTTP("/health", http.MethodGet, http.StatusOK, time.Millisecond)
	}
	m.ObserveHTTP("/health", http.MethodGet, http.StatusServiceUnavailable, time.Millisecond)
	m.ObserveHTTP("/health", http.MethodHead, http.StatusOK, time.Millisecond)
	got := httpCounts(t, m)
	want := map[string]uint64{"/health GET 200": 3, "/health GET 503": 1, "/health HEAD 200": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("observations %v, want %v", got, want)
	}
}

// A client choosing methods must not grow the cache without bound; beyond
// the bound the observations still count.
func TestObserveHTTPCacheIsBounded(t *testing.T) {
	m := New()
	for i := range maxHTTPChildren + 50 {
		m.ObserveHTTP("/x", fmt.Sprintf("M%d", i), http.StatusOK, time.Millisecond)
	}
	n := 0
	m.httpChildren.Range(func(any, any) bool { n++; return true })
	if n > maxHTTPChildren {
		t.Errorf("%d cached children, want at most %d", n, maxHTTPChildren)
	}
	if got := len(httpCounts(t, m)); got != maxHTTPChildren+50 {
		t.Errorf("%d series, want %d", got, maxHTTPChildren+50)
	}
}

func TestObserveHTTPConcurrent(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 1000 {
				m.ObserveHTTP("/stream", http.MethodGet, 200+i%3, time.Microsecond)
			}
		})
	}
	wg.Wait()
	got := httpCounts(t, m)
	want := map[string]uint64{"/stream GET 200": 8 * 334, "/stream GET 201": 8 * 333, "/stream GET 202": 8 * 333}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("observations %v, want %v", got, want)
	}
}

func BenchmarkObserveHTTP(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveHTTP("/ofrep/v1/evaluate/flags/{key}", http.MethodPost, http.StatusOK, time.Millisecond)
	}
}
