package sdkgo

import (
	"log/slog"
	"net/http"
	"time"
)

// config is what Options set; see the With functions for defaults.
type config struct {
	baseURL           string
	httpClient        *http.Client
	logger            *slog.Logger
	initTimeout       time.Duration
	pollAfterFailures int
	pollInterval      time.Duration
	backoffMin        time.Duration
	backoffMax        time.Duration
	flushInterval     time.Duration
	eventCapacity     int
	impressions       bool
	exposureMemory    int
	readTimeout       time.Duration
}

func defaults() config {
	return config{
		baseURL:           "http://localhost:3000",
		httpClient:        &http.Client{},
		logger:            slog.New(slog.DiscardHandler),
		initTimeout:       5 * time.Second,
		pollAfterFailures: 3,
		pollInterval:      30 * time.Second,
		backoffMin:        time.Second,
		backoffMax:        30 * time.Second,
		flushInterval:     5 * time.Second,
		eventCapacity:     10_000,
		impressions:       true,
		exposureMemory:    DefaultExposureMemory,
		readTimeout:       45 * time.Second,
	}
}

// Option configures a Client.
type Option func(*config)

// WithBaseURL sets the server's address (default http://localhost:3000).
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithHTTPClient sets the HTTP client. Its Timeout must be zero: the stream
// is a long-lived request (the SDK bounds it by idleness instead).
func WithHTTPClient(h *http.Client) Option { return func(c *config) { c.httpClient = h } }

// WithLogger sets the logger for connection state and dropped events.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithInitTimeout bounds how long New waits for the first flags (default
// 5 s). After it, New returns ErrNotReady and a client that serves
// defaults until the flags arrive.
func WithInitTimeout(d time.Duration) Option { return func(c *config) { c.initTimeout = d } }

// WithPolling sets after how many consecutive failed stream connections the
// client polls /flags/snapshot (default 3) and how often (default 30 s).
// Polling stops as soon as the stream is back.
func WithPolling(afterFailures int, interval time.Duration) Option {
	return func(c *config) { c.pollAfterFailures, c.pollInterval = afterFailures, interval }
}

// WithBackoff sets the reconnect backoff bounds (default 1 s to 30 s); each
// wait is jittered.
func WithBackoff(minWait, maxWait time.Duration) Option {
	return func(c *config) { c.backoffMin, c.backoffMax = minWait, maxWait }
}

// WithEvents sets how often impressions and goal events are sent (default
// 5 s) and how many may wait (default 10,000; more are dropped and
// counted).
func WithEvents(flushInterval time.Duration, capacity int) Option {
	return func(c *config) { c.flushInterval, c.eventCapacity = flushInterval, capacity }
}

// DefaultExposureMemory is how many (flag, user, value) triples the client
// remembers by default: 100,000 users evaluating 10 flags each. Full, it
// takes about 100 MB (at most 100 bytes a triple); it fills only with the
// triples actually seen.
const DefaultExposureMemory = 1_000_000

// WithExposureMemory sets how many (flag, user, value) triples the client
// remembers having reported (default DefaultExposureMemory; at most 100
// bytes each). An evaluation of a remembered triple is reported as a
// summary count, any other as an impression; the least recently evaluated
// triple is forgotten to make room. 0 remembers nothing: every evaluation of
// an identified user is an impression, as a per-evaluation sender reports.
func WithExposureMemory(n int) Option { return func(c *config) { c.exposureMemory = max(n, 0) } }

// WithoutImpressions stops reporting evaluations, as impressions or as
// summaries (goal events are still sent).
func WithoutImpressions() Option { return func(c *config) { c.impressions = false } }

// WithStreamReadTimeout sets how long a silent stream is trusted (default
// 45 s, three keep-alives).
func WithStreamReadTimeout(d time.Duration) Option { return func(c *config) { c.readTimeout = d } }
