package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/measure"
	"github.com/switchyard/switchyard/server/metrics"
	"github.com/switchyard/switchyard/server/notify"
	"github.com/switchyard/switchyard/server/ofrep"
	"github.com/switchyard/switchyard/server/release"
	"github.com/switchyard/switchyard/server/scim"
	"github.com/switchyard/switchyard/server/sso"
	"github.com/switchyard/switchyard/server/stream"
)

// Config holds what the HTTP layer needs. Its zero PublicDir serves no
// dashboard.
type Config struct {
	Core  *core.Service
	Audit *audit.Service // the workspace audit trail's reads
	// TrustedProxies are the addresses (TRUSTED_PROXIES) whose
	// X-Forwarded-For names the client in audit entries.
	TrustedProxies []netip.Prefix
	Identity       *identity.Service
	Measure        *measure.Service
	Notify         *notify.Service // webhooks and chat integrations
	Releases       *release.Service
	SSO            *sso.Service // single sign-on; nil serves it as off
	// SCIM serves the SCIM token routes and /scim/v2/ (docs/scim.md).
	SCIM      *scim.Service
	Logger    *slog.Logger
	PublicDir string // directory of dashboard static files; may not exist
	// CookieSecure sets the session cookie's Secure flag (COOKIE_SECURE).
	CookieSecure bool
	Hub          *stream.Hub
	Metrics      *metrics.Metrics
	// MetricsToken (METRICS_TOKEN), when set, is the bearer token /metrics
	// requires. MetricsElsewhere (METRICS_ADDR is set) takes /metrics off
	// this handler: NewMetricsHandler serves it on a listener of its own.
	MetricsToken     string
	MetricsElsewhere bool
	// KeepAlive is the stream's keep-alive interval; 15 s when zero
	// (docs/reference/stream.md, Keep-alive).
	KeepAlive time.Duration
	// OFREP configures remote evaluation under /ofrep/v1/ (its Errors is
	// this package's error writer); nil serves none.
	OFREP *ofrep.Config
	// Ping checks that the database answers (the pool's Ping); /health
	// reports its result. Nil: /health checks nothing.
	Ping func(context.Context) error
	// Unreachable reports whether an error means the database could not be
	// reached (store.Unreachable): such errors answer 503, however they
	// were wrapped. Nil: none do.
	Unreachable func(error) bool
}

// NewHandler builds the whole HTTP surface. First match wins: the
// hand-written /health, /api/openapi.json, /stream, /flags/snapshot and
// /scim/v2/, then the dashboard's /api/docs page, then the API (validated
// against the document), then the dashboard catch-all.
func NewHandler(cfg Config) (http.Handler, error) {
	errs := errorWriter{logger: cfg.Logger, unreachable: cfg.Unreachable}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	spec, err := loadSpec()
	if err != nil {
		return nil, err
	}
	// Served with its servers cleared: a relative document works behind any proxy.
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode openapi document: %w", err)
	}
	v, err := newValidator(spec, errs)
	if err != nil {
		return nil, err
	}

	strict := apiserver.NewStrictHandlerWithOptions(&Handlers{core: cfg.Core, audit: cfg.Audit, identity: cfg.Identity, measure: cfg.Measure, notify: cfg.Notify, releases: cfg.Releases, scim: cfg.SCIM, sso: cfg.SSO, logger: logger, cookieSecure: cfg.CookieSecure}, nil, apiserver.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  func(w http.ResponseWriter, r *http.Request, err error) { errs.write(w, r, &jsonSyntaxError{err}) },
		ResponseErrorHandlerFunc: errs.write,
	})
	api := mux.NewRouter()
	api.NotFoundHandler = errs.handler(apperr.E(apperr.NotFound, "no such route"))
	api.MethodNotAllowedHandler = errs.handler(apperr.E(apperr.MethodNotAllowed, "method not allowed on this route"))
	apiserver.HandlerWithOptions(strict, apiserver.GorillaServerOptions{BaseRouter: api, ErrorHandlerFunc: errs.write})
	// The raw exports stream NDJSON, so they are hand-written (export.go)
	// but sit behind the same chain as the generated routes.
	exports := exportHandler{measure: cfg.Measure, audit: cfg.Audit, errs: errs, logger: logger}
	api.Path("/api/audit/export").Methods(http.MethodGet).HandlerFunc(exports.trailExport)
	api.Path("/api/environments/{env_id}/impressions/export").Methods(http.MethodGet).HandlerFunc(exports.impressions)
	api.Path("/api/environments/{env_id}/events/export").Methods(http.MethodGet).HandlerFunc(exports.events)

	root := mux.NewRouter()
	root.MethodNotAllowedHandler = api.MethodNotAllowedHandler
	root.Path("/health").Methods(http.MethodGet, http.MethodHead).Handler(&healthHandler{ping: cfg.Ping, errs: errs, ttl: healthCacheTTL})
	root.Path("/api/openapi.json").Methods(http.MethodGet, http.MethodHead).Handler(rawJSON(specJSON))
	keepAlive := cfg.KeepAlive
	if keepAlive <= 0 {
		keepAlive = 15 * time.Second
	}
	root.Path("/stream").Methods(http.MethodGet).Handler(streamHandler{identity: cfg.Identity, hub: cfg.Hub, errs: errs, keepAlive: keepAlive})
	root.Path("/flags/snapshot").Methods(http.MethodGet, http.MethodOptions).Handler(snapshotHandler{
		identity: cfg.Identity, hub: cfg.Hub, errs: errs,
		counted: func(status int) { cfg.Metrics.SnapshotRequests.WithLabelValues(strconv.Itoa(status)).Inc() },
	})
	if cfg.MetricsElsewhere {
		// Answered here, or the dashboard's catch-all would serve its page.
		root.Path("/metrics").Handler(errs.handler(apperr.E(apperr.NotFound, "no such route")))
	} else {
		root.Path("/metrics").Methods(http.MethodGet).Handler(metricsHandler(cfg.Metrics, cfg.MetricsToken, errs))
	}
	requests := requestRecorder{trusted: cfg.TrustedProxies}
	if cfg.SCIM != nil {
		// SCIM's bodies are application/scim+json and its errors have their
		// own shape, so it stays outside the API chain and its validator;
		// only SCIM tokens authenticate there (docs/scim.md).
		root.PathPrefix(scim.Prefix).Handler(requests.middleware(scim.NewHandler(scim.HandlerConfig{Service: cfg.SCIM, Logger: cfg.Logger, Unreachable: cfg.Unreachable})))
	}
	authn := authenticator{identity: cfg.Identity, errs: errs}
	apiChain := chain(api, requests.middleware, limitBody(errs), rejectUnstorableText(errs), v.findRoute, authn.middleware, limitBatch(errs), v.middleware)
	var top http.Handler = root
	if cfg.OFREP != nil {
		oc := *cfg.OFREP
		oc.Errors = errs.write
		remote, err := ofrep.NewHandler(oc)
		if err != nil {
			return nil, err
		}
		// Remote evaluation is the hottest route a client can poll: it goes
		// to its handler by prefix, before the router matches its patterns.
		top = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/ofrep/") {
				remote.ServeHTTP(w, r)
				return
			}
			root.ServeHTTP(w, r)
		})
		// Browsers report exposures with a client key (docs/reference/ofrep.md,
		// Browsers).
		root.Path("/api/environments/{env_id}/{ingest:impressions|events|impressions/summaries}").Handler(ofrep.CORS(apiChain))
	}
	dashboard := newStatic(cfg.PublicDir, errs)
	// The browsable API reference is a dashboard page that reads
	// /api/openapi.json; it is not an operation, so it bypasses the API
	// chain (and its validator) and is the only dashboard path under /api/.
	root.Path("/api/docs").Methods(http.MethodGet, http.MethodHead).Handler(dashboard)
	root.PathPrefix("/api/").Handler(apiChain)
	root.PathPrefix("/").Handler(dashboard)

	return chain(top, secureHeaders(cfg.CookieSecure), logRequests(cfg.Logger, cfg.Metrics), recoverPanics(errs)), nil
}

// NewMetricsHandler is the handler of METRICS_ADDR's own listener: GET
// /metrics, behind token when it is set (metricsHandler), and a JSON 404 for
// every other path. Its requests are neither logged nor counted.
func NewMetricsHandler(m *metrics.Metrics, token string, logger *slog.Logger) http.Handler {
	errs := errorWriter{logger: logger}
	r := mux.NewRouter()
	r.NotFoundHandler = errs.handler(apperr.E(apperr.NotFound, "no such route (this listener serves /metrics only)"))
	r.MethodNotAllowedHandler = errs.handler(apperr.E(apperr.MethodNotAllowed, "method not allowed on this route"))
	r.Path("/metrics").Methods(http.MethodGet).Handler(metricsHandler(m, token, errs))
	return chain(r, secureHeaders(false), recoverPanics(errs))
}

// metricsHandler serves the Prometheus registry. With a token (METRICS_TOKEN)
// a request must send Authorization: Bearer <token>, compared in constant
// time; any other request is answered 401 with the API's JSON error.
func metricsHandler(m *metrics.Metrics, token string, errs errorWriter) http.Handler {
	registry := m.Handler()
	if token == "" {
		return registry
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []byte
		if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			got = []byte(h[7:])
		}
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			errs.write(w, r, apperr.E(apperr.Unauthenticated, "/metrics requires Authorization: Bearer <METRICS_TOKEN>"))
			return
		}
		registry.ServeHTTP(w, r)
	})
}

// handler answers every request with err.
func (ew errorWriter) handler(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ew.write(w, r, err) })
}

// healthPingTimeout bounds /health's database ping: a probe must get an
// answer well within a load balancer's own timeout, outage or not.
const healthPingTimeout = 2 * time.Second

// healthCacheTTL is how long one ping's result answers /health. Probes come
// from load balancers, orchestrators and the benchmark's control probe, so
// most must not touch the database at all.
const healthCacheTTL = time.Second

// healthHandler answers /health without authentication: 200 "OK" while the
// database answers, 503 with Retry-After and a JSON error body while it
// does not (the same answer as any other route during an outage).
type healthHandler struct {
	ping func(context.Context) error
	errs errorWriter
	ttl  time.Duration // how long a result stands; healthCacheTTL
	// last is the latest ping's result; pinging is held by the one probe
	// refreshing it. Atomics, not a mutex: a probe never waits for another
	// probe's ping.
	last    atomic.Pointer[healthResult]
	pinging atomic.Bool
}

type healthResult struct {
	at  time.Time
	err error
}

func (h *healthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := h.check(r.Context()); err != nil {
		h.errs.write(w, r, apperr.DatabaseUnavailable(err))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("OK"))
}

// check returns the database's state, pinging at most once per TTL: when
// the cached result is stale, one probe pings while concurrent probes answer
// from the stale result (at most one TTL plus one ping timeout old). Only the
// very first probes, with nothing cached, all ping.
func (h *healthHandler) check(ctx context.Context) error {
	if h.ping == nil {
		return nil
	}
	last := h.last.Load()
	if last != nil && time.Since(last.at) < h.ttl {
		return last.err
	}
	owner := h.pinging.CompareAndSwap(false, true)
	if !owner && last != nil {
		return last.err
	}
	if owner {
		defer h.pinging.Store(false)
	}
	// Detached from the probe's cancellation: the result is shared, and a
	// probe that hangs up must not cache a failure.
	pingCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healthPingTimeout)
	defer cancel()
	err := h.ping(pingCtx)
	h.last.Store(&healthResult{at: time.Now(), err: err})
	return err
}

// rawJSON serves a fixed, pre-encoded JSON body.
func rawJSON(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
