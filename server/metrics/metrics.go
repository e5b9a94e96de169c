// Package metrics holds Switchyard's Prometheus collectors, registered on a
// registry of their own (no global state), served at GET /metrics.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the collectors the server updates.
type Metrics struct {
	registry *prometheus.Registry

	// OpenStreams counts open /stream connections per environment.
	OpenStreams *prometheus.GaugeVec
	// FanoutSeconds is the time from a change notification reaching the hub
	// to its update being queued for every subscriber of the environment.
	FanoutSeconds prometheus.Histogram
	// BusResubscribes counts Redis (re)subscriptions after the first.
	BusResubscribes prometheus.Counter
	// Resyncs counts hub resyncs (all streams closed and caches dropped).
	Resyncs prometheus.Counter
	// CatchUps counts reads of the change log that requests waited for
	// because this instance's leases had lapsed (server/agree).
	CatchUps prometheus.Counter
	// WriteWaitsCut counts writes that stopped waiting for another
	// instance's confirmation at their bound (server/agree).
	WriteWaitsCut prometheus.Counter
	// SlowClients counts stream clients cut off for falling behind.
	SlowClients prometheus.Counter
	// SnapshotRequests counts /flags/snapshot answers by status code.
	SnapshotRequests *prometheus.CounterVec
	// HTTPDuration observes HTTP requests by route template, method, status;
	// ObserveHTTP is the cheap way to record one.
	HTTPDuration *prometheus.HistogramVec
	// OFREPExposuresDropped counts OFREP evaluations left unrecorded on a
	// full queue (an impression, or a summary count that needed a new row).
	OFREPExposuresDropped prometheus.Counter
	// IngestGateWaits counts measurement batches that waited for the fold
	// at the ingest gate; IngestGateOverflows those taken over the tail
	// limit after the longest wait (server/measure/gate.go).
	IngestGateWaits, IngestGateOverflows prometheus.Counter

	// httpChildren caches HTTPDuration's children by httpLabels: looking one
	// up by label values hashes them, takes the vector's lock and formats
	// the status on every request. At most maxHTTPChildren entries, counted
	// by httpCached, so clients choosing methods cannot grow it.
	httpChildren sync.Map // httpLabels -> prometheus.Observer
	httpCached   atomic.Int64
}

// maxHTTPChildren bounds the cache of HTTPDuration children: the routes
// times the methods and statuses they answer with, with room to spare.
const maxHTTPChildren = 512

type httpLabels struct {
	route, method string
	status        int
}

// New registers the collectors, with the Go runtime and process ones.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		OpenStreams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "switchyard_open_streams", Help: "Open /stream connections per environment.",
		}, []string{"env_id"}),
		FanoutSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "switchyard_broadcast_fanout_seconds", Help: "Time from a change notification to its update queued for every subscriber.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		BusResubscribes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_bus_resubscribes_total", Help: "Redis pub/sub (re)subscriptions after the first.",
		}),
		CatchUps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_catch_up_reads_total", Help: "Reads of the change log that requests waited for, because this instance could not vouch for its caches.",
		}),
		WriteWaitsCut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_write_waits_cut_total", Help: "Writes that stopped waiting for another instance's confirmation at their bound.",
		}),
		Resyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_stream_resyncs_total", Help: "Hub resyncs: streams closed because messages may have been lost.",
		}),
		SlowClients: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_stream_slow_clients_total", Help: "Stream clients disconnected for falling behind.",
		}),
		SnapshotRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_snapshot_requests_total", Help: "Snapshot requests by status code.",
		}, []string{"status"}),
		HTTPDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchyard_http_request_duration_seconds", Help: "HTTP requests by route, method and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "status"}),
		OFREPExposuresDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_ofrep_impressions_dropped_total", Help: "OFREP evaluations not recorded because a queue was full (impressions, or summary counts needing a new row).",
		}),
		IngestGateWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_ingest_gate_waits_total", Help: "Measurement batches that waited for the fold because the unfolded tail was at its limit.",
		}),
		IngestGateOverflows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchyard_ingest_gate_overflows_total", Help: "Measurement batches taken over the unfolded-tail limit after the longest wait.",
		}),
	}
	m.registry.MustRegister(m.OpenStreams, m.FanoutSeconds, m.BusResubscribes, m.Resyncs, m.CatchUps, m.WriteWaitsCut, m.SlowClients,
		m.SnapshotRequests, m.HTTPDuration, m.OFREPExposuresDropped, m.IngestGateWaits, m.IngestGateOverflows,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveHTTP records one request's duration in HTTPDuration. Requests
// arrive by the ten thousand per second, so the histogram child of a label
// set is looked up once and kept.
func (m *Metrics) ObserveHTTP(route, method string, status int, d time.Duration) {
	k := httpLabels{route: route, method: method, status: status}
	if o, ok := m.httpChildren.Load(k); ok {
		o.(prometheus.Observer).Observe(d.Seconds())
		return
	}
	o := m.HTTPDuration.WithLabelValues(route, method, strconv.Itoa(status))
	if m.httpCached.Add(1) <= maxHTTPChildren {
		m.httpChildren.LoadOrStore(k, o)
	}
	o.Observe(d.Seconds())
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
