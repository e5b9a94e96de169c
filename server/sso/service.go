package sso

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
)

// Sessions starts sessions the way a password sign-in does. The identity
// service implements it.
type Sessions interface {
	// SignIn runs fn in one transaction of the identity service and, in the
	// same transaction, starts a session for the user id fn returns. It
	// returns the sealed session cookie value and its expiry. When fn fails
	// nothing of the transaction is kept.
	SignIn(ctx context.Context, fn func(q *db.Queries) (int64, error)) (cookie string, expires time.Time, err error)
}

// Service holds the single sign-on settings and runs sign-ins.
type Service struct {
	pool      *pgxpool.Pool
	logger    *slog.Logger
	now       func() time.Time
	sessions  Sessions
	secrets   *auth.Box // the client secret at rest
	cookies   *auth.Box // the sign-in cookie
	publicURL string
	trail     *audit.Trail
	client    *http.Client

	mu        sync.Mutex
	providers map[string]*oidc.Provider // by issuer; their key sets follow rotation
}

// Config holds a Service's settings. SessionSecret, Sessions and PublicURL
// are required; the rest have working zero values.
type Config struct {
	// Trail records every write in the workspace audit trail, in the
	// write's transaction; nil records with a development key.
	Trail         *audit.Trail
	Logger        *slog.Logger     // discarded when nil
	Now           func() time.Time // time.Now when nil
	SessionSecret string           // SESSION_SECRET: the sealing keys derive from it
	Sessions      Sessions
	PublicURL     string       // PUBLIC_URL: the redirect URI is PublicURL + CallbackPath
	HTTPClient    *http.Client // for the provider; a client with a 10 s timeout when nil
}

// CallbackPath is where the provider sends the browser back.
const CallbackPath = "/api/auth/oidc/callback"

// LoginPath starts a sign-in.
const LoginPath = "/api/auth/oidc/login"

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) (*Service, error) {
	secrets, err := auth.NewBox(cfg.SessionSecret, "sso client secret")
	if err != nil {
		return nil, err
	}
	cookies, err := auth.NewBox(cfg.SessionSecret, "sso sign-in cookie")
	if err != nil {
		return nil, err
	}
	s := &Service{
		pool: pool, logger: cfg.Logger, now: cfg.Now, sessions: cfg.Sessions, secrets: secrets, cookies: cookies,
		publicURL: strings.TrimRight(cfg.PublicURL, "/"), trail: cfg.Trail, client: cfg.HTTPClient, providers: map[string]*oidc.Provider{},
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: 10 * time.Second}
	}
	return s, nil
}

// RedirectURI is the redirect URI to register with the provider.
func (s *Service) RedirectURI() string { return s.publicURL + CallbackPath }

// providerCtx carries the Service's HTTP client to go-oidc and oauth2.
func (s *Service) providerCtx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, s.client)
}

// provider returns the provider of issuer, discovering it on first use. A
// cached provider's key set refetches the provider's keys when a token is
// signed with a key it does not know, so rotation needs nothing here.
func (s *Service) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	s.mu.Lock()
	p, ok := s.providers[issuer]
	s.mu.Unlock()
	if ok {
		return p, nil
	}
	// Detached: the provider outlives this request and its key set fetches
	// with the context it was made with.
	p, err := oidc.NewProvider(s.providerCtx(context.WithoutCancel(ctx)), issuer)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.providers[issuer] = p
	s.mu.Unlock()
	return p, nil
}

// forget drops a cached provider, so changed settings rediscover it.
func (s *Service) forget(issuer string) {
	s.mu.Lock()
	delete(s.providers, issuer)
	s.mu.Unlock()
}
