package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/switchyard/switchyard/server/httpapi"
	"github.com/switchyard/switchyard/server/metrics"
)

// metricsListener serves /metrics on METRICS_ADDR, apart from the main
// port (docs/deployment.md, Monitoring). Its methods do nothing on a nil
// one: METRICS_ADDR unset, /metrics is on the main port.
type metricsListener struct {
	ln     net.Listener
	server *http.Server
	done   chan struct{}
}

// listenMetrics opens METRICS_ADDR's listener; nil, nil when addr is empty.
func listenMetrics(addr, token string, m *metrics.Metrics, logger *slog.Logger) (*metricsListener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (METRICS_ADDR): %w", addr, err)
	}
	return &metricsListener{ln: ln, done: make(chan struct{}), server: &http.Server{
		Handler:           httpapi.NewMetricsHandler(m, token, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}}, nil
}

// addr is the bound address, e.g. 127.0.0.1:9100; empty on a nil one.
func (l *metricsListener) addr() string {
	if l == nil {
		return ""
	}
	return l.ln.Addr().String()
}

// start serves in the background. A listener that fails is logged: the
// main port keeps serving without its metrics.
func (l *metricsListener) start(logger *slog.Logger) {
	if l == nil {
		return
	}
	logger.Info("serving metrics", "addr", l.addr())
	go func() {
		defer close(l.done)
		if err := l.server.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve metrics", "addr", l.addr(), "err", err.Error())
		}
	}()
}

// shutdown lets in-flight scrapes finish (until ctx ends) and waits for
// the listener to close.
func (l *metricsListener) shutdown(ctx context.Context) {
	if l == nil {
		return
	}
	if err := l.server.Shutdown(ctx); err != nil {
		_ = l.server.Close()
	}
	<-l.done
}
