package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/metrics"
	"github.com/switchyard/switchyard/server/stream"
)

// Config holds what the HTTP layer needs. Its zero PublicDir serves no
// dashboard.
type Config struct {
	Core      *core.Service
	Logger    *slog.Logger
	PublicDir string // directory of dashboard static files; may not exist
	// CookieSecure sets the session cookie's Secure flag (COOKIE_SECURE).
	CookieSecure bool
	Hub          *stream.Hub
	Metrics      *metrics.Metrics
	// KeepAlive is the stream's keep-alive interval; 15 s (spec, Limits)
	// when zero.
	KeepAlive time.Duration
}

// NewHandler builds the whole HTTP surface. First match wins: the
// hand-written /health, /api/openapi.json, /stream and /flags/snapshot, then
// the API (validated against the document), then the dashboard catch-all.
func NewHandler(cfg Config) (http.Handler, error) {
	errs := errorWriter{logger: cfg.Logger}
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

	strict := apiserver.NewStrictHandlerWithOptions(&Handlers{core: cfg.Core, cookieSecure: cfg.CookieSecure}, nil, apiserver.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  func(w http.ResponseWriter, r *http.Request, err error) { errs.write(w, r, &jsonSyntaxError{err}) },
		ResponseErrorHandlerFunc: errs.write,
	})
	api := mux.NewRouter()
	api.NotFoundHandler = errs.handler(apperr.E(apperr.NotFound, "no such route"))
	api.MethodNotAllowedHandler = errs.handler(apperr.E(apperr.MethodNotAllowed, "method not allowed on this route"))
	apiserver.HandlerWithOptions(strict, apiserver.GorillaServerOptions{BaseRouter: api, ErrorHandlerFunc: errs.write})

	root := mux.NewRouter()
	root.MethodNotAllowedHandler = api.MethodNotAllowedHandler
	root.Path("/health").Methods(http.MethodGet, http.MethodHead).HandlerFunc(health)
	root.Path("/api/openapi.json").Methods(http.MethodGet, http.MethodHead).Handler(rawJSON(specJSON))
	keepAlive := cfg.KeepAlive
	if keepAlive <= 0 {
		keepAlive = 15 * time.Second
	}
	root.Path("/stream").Methods(http.MethodGet).Handler(streamHandler{core: cfg.Core, hub: cfg.Hub, errs: errs, keepAlive: keepAlive})
	root.Path("/flags/snapshot").Methods(http.MethodGet, http.MethodOptions).Handler(snapshotHandler{
		core: cfg.Core, hub: cfg.Hub, errs: errs,
		counted: func(status int) { cfg.Metrics.SnapshotRequests.WithLabelValues(strconv.Itoa(status)).Inc() },
	})
	root.Path("/metrics").Methods(http.MethodGet).Handler(cfg.Metrics.Handler())
	authn := authenticator{core: cfg.Core, errs: errs}
	root.PathPrefix("/api/").Handler(chain(api, limitBody(errs), rejectUnstorableText(errs), v.findRoute, authn.middleware, limitBatch(errs), v.middleware))
	root.PathPrefix("/").Handler(newStatic(cfg.PublicDir, errs))

	return chain(root, logRequests(cfg.Logger, cfg.Metrics), recoverPanics(errs)), nil
}

// handler answers every request with err.
func (ew errorWriter) handler(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ew.write(w, r, err) })
}

// health answers the liveness check: plain-text OK, no authentication.
func health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("OK"))
}

// rawJSON serves a fixed, pre-encoded JSON body.
func rawJSON(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
