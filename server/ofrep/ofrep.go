// Package ofrep serves the OpenFeature Remote Evaluation Protocol
// (docs/reference/ofrep.md): single and bulk evaluation, the provider
// configuration, and the change-notification stream that the official web
// provider connects to. Remote evaluation is a context of its own
// (docs/reference/code-style.md, §16 Contexts and locks): it reads the stream
// hub's in-memory, segment-expanded flags through the small Flags interface and
// evaluates them with sdkgo/eval, the one evaluator, so a flag gives the same
// value here as in the Go SDK. Nothing on the evaluation path touches the
// database: authentication uses identity's SDK key cache, and exposures are
// handed to a bounded recorder (Exposures).
package ofrep

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
)

// Authenticator resolves a request's credentials; *identity.Service implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, c auth.Credentials) (*auth.Principal, error)
}

// Environment is one environment's flags at one moment: compiled for
// evaluation, and tagged so that any change of any flag changes Tag.
type Environment struct {
	Flags *eval.Snapshot
	Tag   string
}

// Watch is a registration for an environment's change notices. Changed
// receives when flags changed; call Drain after each receive. Done is closed
// when the hub ends the watch (the key revoked, a resync, shutdown).
type Watch interface {
	Changed() <-chan struct{}
	Drain()
	Tag() string // the environment's flags' tag now, as Environment's
	Done() <-chan struct{}
	Close()
}

// Flags is what remote evaluation reads of the real-time side; the stream
// hub implements it (app wires the two).
type Flags interface {
	// Environment returns an environment's current flags.
	Environment(ctx context.Context, envID uuid.UUID) (Environment, error)
	// Watch registers for change notices of envID until the watch is closed,
	// or until any of creds (auth.Principal.CredentialRefs) is revoked.
	Watch(ctx context.Context, envID uuid.UUID, creds []string) (Watch, error)
}

// Keys finds the key an event-stream token names; *identity.Service implements it.
type Keys interface {
	SDKKeyPrincipal(ctx context.Context, keyID int64, envID uuid.UUID) (*auth.Principal, error)
}

// ErrorWriter writes an error the way the rest of the API does (the one
// status map, httpapi's error writer).
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// Config is what a Handler needs. Auth, Flags, Keys, Errors and Exposures are
// required; TokenSecret seals event-stream tokens (SESSION_SECRET).
type Config struct {
	Auth        Authenticator
	Flags       Flags
	Keys        Keys
	Errors      ErrorWriter
	Exposures   *Exposures
	TokenSecret string
	Logger      *slog.Logger
	KeepAlive   time.Duration // event-stream keep-alive; default 15 s
	// MinPollingInterval is what /ofrep/v1/configuration advertises; default 30 s.
	MinPollingInterval time.Duration
}

// Handler serves every OFREP route under /ofrep/v1/.
type Handler struct {
	cfg     Config
	tokens  tokens
	notices [2]atomic.Pointer[notice] // the last change notice for server keys, for client keys
	buffers sync.Pool                 // *bytes.Buffer: request bodies and answers (evaluate.go)
}

// NewHandler returns the OFREP handler.
func NewHandler(cfg Config) (*Handler, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.MinPollingInterval <= 0 {
		cfg.MinPollingInterval = 30 * time.Second
	}
	tk, err := newTokens(cfg.TokenSecret)
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, tokens: tk}, nil
}

// The routes, under the prefix the router sends here.
const (
	pathBulk          = "/ofrep/v1/evaluate/flags"
	pathSinglePrefix  = pathBulk + "/"
	pathConfiguration = "/ofrep/v1/configuration"
	pathEvents        = "/ofrep/v1/events"
)

// ServeHTTP answers CORS preflights for any origin (docs/reference/ofrep.md,
// Browsers), marks every answer for cross-origin readers, and routes: four
// fixed paths, matched by hand because clients poll them (a pattern router
// costs more than the 304 it answers).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r)
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	path := r.URL.Path
	switch {
	case path == pathBulk:
		h.only(w, r, http.MethodPost, h.evaluateAll)
	case strings.HasPrefix(path, pathSinglePrefix) && !strings.Contains(path[len(pathSinglePrefix):], "/") && len(path) > len(pathSinglePrefix):
		h.only(w, r, http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
			h.evaluateOne(w, r, path[len(pathSinglePrefix):])
		})
	case path == pathConfiguration:
		h.only(w, r, http.MethodGet, h.configuration)
	case path == pathEvents:
		h.only(w, r, http.MethodGet, h.events)
	default:
		h.cfg.Errors(w, r, apperr.E(apperr.NotFound, "no such route"))
	}
}

// only admits one method on a route; others answer 405 like every route
// (docs/reference/errors.md, Status codes: an unsupported method on a known
// path).
func (h *Handler) only(w http.ResponseWriter, r *http.Request, method string, next http.HandlerFunc) {
	if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
		w.Header().Set("Allow", method+", OPTIONS")
		h.cfg.Errors(w, r, apperr.E(apperr.MethodNotAllowed, "method not allowed on this route"))
		return
	}
	next(w, r)
}

// allowCORS sets what browsers need to call OFREP and ingest routes from any
// origin with a client key. Credentials travel in headers, never cookies, so
// any origin may be allowed.
func allowCORS(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Access-Control-Expose-Headers", "ETag")
	if r.Method == http.MethodOptions {
		hdr.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		hdr.Set("Access-Control-Allow-Headers", "Authorization, X-API-Key, Content-Type, If-None-Match")
		hdr.Set("Access-Control-Max-Age", "600")
	}
}

// CORS wraps the ingest routes with the same browser rules as OFREP
// (docs/reference/ofrep.md, Browsers): client keys report exposures from
// browsers.
func CORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowCORS(w, r)
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// errSessionOrToken answers a session cookie or personal access token:
// OFREP is for SDK keys (docs/reference/ofrep.md, Credentials).
var errSessionOrToken = apperr.E(apperr.Forbidden, "OFREP needs a server or client SDK key")

// authenticate reads a key from Authorization: Bearer or X-API-Key.
func (h *Handler) authenticate(r *http.Request) (*auth.Principal, error) {
	key := ""
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		key = strings.TrimSpace(v)
	} else if v := r.Header.Get("X-API-Key"); v != "" {
		key = strings.TrimSpace(v)
	}
	creds := auth.Credentials{Bearer: key}
	if key == "" {
		if c, err := r.Cookie(auth.SessionCookieName); err == nil {
			creds.Cookie = c.Value
		}
	}
	p, err := h.cfg.Auth.Authenticate(r.Context(), creds)
	if err != nil {
		return nil, err
	}
	if p.Kind != auth.KindSDKKey {
		return nil, errSessionOrToken
	}
	return p, nil
}
