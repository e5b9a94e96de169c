// Package app wires Switchyard together: configuration, the database pool,
// migrations, first-boot seeding, the HTTP server and graceful shutdown. It is
// the only package that imports every other one; nothing imports it but main
// and tests.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/httpapi"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/measure"
	"github.com/switchyard/switchyard/server/notify"
	"github.com/switchyard/switchyard/server/ofrep"
	"github.com/switchyard/switchyard/server/release"
	"github.com/switchyard/switchyard/server/scim"
	"github.com/switchyard/switchyard/server/sso"
	"github.com/switchyard/switchyard/server/store"
)

// shutdownTimeout bounds how long in-flight requests may finish after
// SIGTERM: up to 10 s (docs/reference/server.md, Shutdown).
const shutdownTimeout = 10 * time.Second

// startupTimeout bounds connecting and seeding at start. Migrations are not
// under it: one that rewrites a large table (an index over millions of
// impressions) may rightly take minutes, and cutting it short would only make
// every restart start it again. They end with ctx, that is on SIGTERM.
const startupTimeout = 60 * time.Second

// Run is the whole program: it reads the configuration from lookupEnv, starts
// the server, writes JSON logs to stdout and blocks until ctx is cancelled,
// then shuts down gracefully. Configuration comes from the environment only
// (docs/reference/server.md, Configuration), so any command-line argument is
// an error.
func Run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout io.Writer) error {
	if len(args) > 1 {
		return fmt.Errorf("unexpected arguments %q: switchyard is configured through environment variables only", args[1:])
	}
	cfg, err := config.FromEnv(lookupEnv)
	if err != nil {
		return err
	}
	// The runtime's default (GOGC=100) collects at every doubling of a
	// small live heap, and the evaluation routes allocate per request: at
	// tens of thousands of requests a second collection took a visible
	// share of the server's CPU (docs/performance.md, OFREP). An operator's
	// GOGC still wins.
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	logger := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	a, err := New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	return a.Serve(ctx)
}

// defaultGCPercent is the server's GOGC unless the environment sets one:
// collections at every tripling of the live heap instead of every doubling.
const defaultGCPercent = 200

// App is a started but not yet serving Switchyard instance. Tests use it to
// learn the bound address before serving.
type App struct {
	workers  workers
	cfg      config.Config
	logger   *slog.Logger
	pool     *pgxpool.Pool
	reads    *pgxpool.Pool // the measurement reads' bulkhead
	listener net.Listener
	server   *http.Server
	metrics  *metricsListener // METRICS_ADDR's; nil when unset
	rt       *realtime
	// retention folds ingested batches into the measurement rollups and
	// purges expired impressions and goal events until its context ends
	// (server/measure/rollups.go, retention.go).
	retention func(context.Context)
}

// Option adjusts an App; tests use them.
type Option func(*options)

type options struct {
	now func() time.Time
	// noTrail records no audit entries: only to measure what the trail
	// costs a write (WithoutAuditTrail).
	noTrail bool
	folder  measure.FolderConfig
	// noExperimentCounts starts no builder of experiment counts
	// (WithoutExperimentCounts).
	noExperimentCounts bool
	realtimeOptions
	governance
}

// WithoutAuditTrail makes the App record no audit entries. It exists only
// to measure what the trail costs a write (bench/audit); never serve with it.
func WithoutAuditTrail() Option {
	return func(o *options) { o.noTrail = true }
}

// WithClock makes the App read the time from now instead of time.Now, so
// tests of lockouts, expiry and schedules need no sleeps.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// WithRollupFolder configures the background folder of the measurement
// rollups (measure.FolderConfig; its zero value is the default). Benchmarks
// use it to compare folding policies.
func WithRollupFolder(cfg measure.FolderConfig) Option {
	return func(o *options) { o.folder = cfg }
}

// New validates cfg, connects to PostgreSQL, runs migrations (under a lock,
// so concurrent instances are safe), seeds a first boot and opens the
// listener. Nothing is served until Serve.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, opts ...Option) (_ *App, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	warnings, err := cfg.Validate()
	for _, w := range warnings {
		logger.Warn(w)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}

	startCtx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	pool, err := store.Open(startCtx, cfg.DatabaseURL, cfg.DBMaxConnections)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	if err := store.Migrate(ctx, pool, logger); err != nil {
		return nil, err
	}
	// The measurement reads' bulkhead: their own connections, each
	// statement bounded (docs/architecture.md, Measurement).
	reads, err := store.OpenBounded(startCtx, cfg.DatabaseURL, cfg.MeasureReadConnections, cfg.MeasureReadTimeout)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			reads.Close()
		}
	}()
	sealer, err := auth.NewSealer(cfg.SessionSecret)
	if err != nil {
		return nil, err
	}
	rt, err := newRealtime(cfg, pool, o.now, logger, o.realtimeOptions)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			rt.close()
		}
	}()
	trail := audit.New(audit.KeyFrom(cfg.TrailKey()), o.now)
	if o.noTrail {
		trail = audit.Disabled()
	}
	idSvc := identity.New(pool, identity.Config{Logger: logger, Now: o.now, LegacySDKKey: cfg.SDKKey, Sealer: sealer, Bus: rt.follower, CaughtUp: rt.follower.CaughtUp, Trail: trail})
	releases := release.New(pool, release.Config{Logger: logger, Now: o.now, Bus: rt.follower, Trail: trail})
	provisioning := scim.New(pool, scim.Config{Logger: logger, Now: o.now, Invalidator: idSvc, Bus: rt.follower, Trail: trail})
	svc := core.New(pool, core.Config{Logger: logger, Now: o.now, Bus: rt.follower, Releases: releases, Trail: trail})
	if err := idSvc.Seed(startCtx, identity.SeedConfig{
		WorkspaceName: cfg.WorkspaceName,
		AdminEmail:    cfg.AdminEmail,
		AdminPassword: cfg.AdminPassword,
		AdminName:     cfg.AdminName,
	}); err != nil {
		return nil, err
	}
	signOn, err := sso.New(pool, sso.Config{Logger: logger, Now: o.now, SessionSecret: cfg.SessionSecret, Sessions: idSvc, PublicURL: cfg.PublicURL, Trail: trail})
	if err != nil {
		return nil, err
	}
	notifications := notify.NewService(pool, notify.ServiceConfig{Logger: logger, Now: o.now, NotifyBackoff: o.notifyBackoff, NotifyLease: o.notifyLease, Trail: trail})
	maxTail := cfg.IngestMaxUnfolded
	if maxTail == 0 {
		maxTail = -1 // INGEST_MAX_UNFOLDED=0: no limit
	}
	meas := measure.New(pool, measure.Config{Reads: reads, ReadTimeout: cfg.MeasureReadTimeout, Logger: logger, Now: o.now, MaxTail: maxTail,
		GateWaited: rt.metrics.IngestGateWaits.Inc, GateOverflowed: rt.metrics.IngestGateOverflows.Inc})

	if err := rt.startHub(startCtx, svc, idSvc, logger); err != nil {
		return nil, err
	}
	rt.exposures = ofrep.NewExposures(meas, ofrep.ExposuresConfig{Logger: logger, Memory: cfg.OFREPExposureMemory,
		FlushInterval: o.exposureFlush, Dropped: rt.metrics.OFREPExposuresDropped.Inc, Now: o.now})
	rt.exposures.Start()
	handler, err := httpapi.NewHandler(httpapi.Config{
		Core: svc, Audit: audit.NewService(pool, trail), TrustedProxies: cfg.TrustedProxies, Identity: idSvc, Releases: releases, SCIM: provisioning, SSO: signOn, Measure: meas, Notify: notifications, Logger: logger, PublicDir: cfg.PublicDir, CookieSecure: cfg.CookieSecure,
		Hub: rt.hub, Metrics: rt.metrics, MetricsToken: cfg.MetricsToken, MetricsElsewhere: cfg.MetricsAddr != "", KeepAlive: o.keepAlive,
		OFREP: &ofrep.Config{
			Auth: idSvc, Flags: hubFlags{rt.hub}, Keys: idSvc, Exposures: rt.exposures,
			TokenSecret: cfg.SessionSecret, Logger: logger, KeepAlive: o.keepAlive,
		},
		Ping: pool.Ping, Unreachable: store.Unreachable,
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr(), err)
	}
	metricsLn, err := listenMetrics(cfg.MetricsAddr, cfg.MetricsToken, rt.metrics, logger)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	loops := append(o.workers(svc, notifications, releases, logger),
		sealTrail(trail, pool, o.workerInterval, logger), refreshStatistics(meas, o.workerInterval, logger))
	if !o.noExperimentCounts {
		loops = append(loops, countExperiments(meas, o.workerInterval, logger))
	}
	return &App{
		workers:  loops,
		cfg:      cfg,
		logger:   logger,
		pool:     pool,
		reads:    reads,
		listener: ln,
		metrics:  metricsLn,
		rt:       rt,
		retention: func(ctx context.Context) {
			folded := make(chan struct{})
			go func() { defer close(folded); meas.RunRollupFolder(ctx, o.folder) }()
			pruned := make(chan struct{})
			go func() { defer close(pruned); pruneTrail(ctx, trail, pool, cfg.AuditRetentionDays, o.now, logger) }()
			meas.RunRetention(ctx, measure.RetentionConfig{Days: cfg.RetentionDays})
			<-folded
			<-pruned
		},
		server: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       120 * time.Second,
			// No WriteTimeout: it would cut long-lived event streams.
			ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}, nil
}

// Addr is the address the App listens on, e.g. 127.0.0.1:41234.
func (a *App) Addr() string { return a.listener.Addr().String() }

// MetricsAddr is the address /metrics has to itself (METRICS_ADDR), e.g.
// 127.0.0.1:9100; empty when /metrics is on the main port.
func (a *App) MetricsAddr() string { return a.metrics.addr() }

// Serve serves until ctx is cancelled, then stops accepting, lets in-flight
// requests finish (up to 10 s), closes the pool and returns nil.
func (a *App) Serve(ctx context.Context) error {
	defer a.pool.Close()
	defer a.reads.Close()
	stopWorkers := a.workers.start(ctx)
	defer stopWorkers() // before the pool closes: deferred calls run last-in first-out
	retentionCtx, stopRetention := context.WithCancel(ctx)
	retentionDone := make(chan struct{})
	go func() { defer close(retentionDone); a.retention(retentionCtx) }()
	defer func() { stopRetention(); <-retentionDone }() // also before the pool closes
	// Streams never end on their own: Shutdown waits for handlers, so the
	// hub must end them (docs/reference/code-style.md, §6 Bus and hub).
	a.server.RegisterOnShutdown(a.rt.hub.Close)
	defer a.rt.close()
	a.logger.Info("listening", "addr", a.Addr())
	serveErr := make(chan error, 1)
	go func() { serveErr <- a.server.Serve(a.listener) }()
	a.metrics.start(a.logger)

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	a.logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := a.server.Shutdown(shutdownCtx); err != nil {
		a.logger.Warn("graceful shutdown cut short", "err", err.Error())
		_ = a.server.Close()
	}
	a.metrics.shutdown(shutdownCtx) // after the main port: scrapes see the drain
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	a.logger.Info("stopped")
	return nil
}
