package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/notify"
	"github.com/switchyard/switchyard/server/release"
	"github.com/switchyard/switchyard/server/worker"
)

// governance holds the options of the governance workers.
type governance struct {
	notifyBackoff  []time.Duration
	notifyLease    time.Duration
	workerInterval time.Duration
	noDelivery     bool
	noScheduler    bool
}

// WithNotifyBackoff replaces the waits before the retries of a failed
// webhook or chat delivery (1 s, 5 s, 15 s), so tests need not wait.
func WithNotifyBackoff(delays ...time.Duration) Option {
	return func(o *options) { o.notifyBackoff = delays }
}

// WithNotifyLease replaces how long a claimed notification stays reserved for
// its sender between two renewals (notify.ServiceConfig.NotifyLease, 10 s), so
// tests can hold a request open for several leases without waiting long.
func WithNotifyLease(d time.Duration) Option {
	return func(o *options) { o.notifyLease = d }
}

// WithWorkerInterval sets how often the idle scheduled-change runner and
// notification delivery loop look for work (default one second).
func WithWorkerInterval(d time.Duration) Option {
	return func(o *options) { o.workerInterval = d }
}

// WithoutDelivery starts no notification delivery loop: notifications stay
// in the outbox until an instance with one runs. Tests use it to stop
// between commit and delivery.
func WithoutDelivery() Option {
	return func(o *options) { o.noDelivery = true }
}

// WithoutScheduler starts no scheduled-change runner and no release guard.
func WithoutScheduler() Option {
	return func(o *options) { o.noScheduler = true }
}

var (
	_ worker.Notifications = (*notify.Service)(nil)
	_ worker.Releases      = (*release.Service)(nil)
)

// workers are an App's background loops.
type workers []*worker.Loop

func (g governance) workers(svc *core.Service, notifications *notify.Service, releases *release.Service, logger *slog.Logger) workers {
	var w workers
	if !g.noScheduler {
		w = append(w, worker.NewScheduler(svc, g.workerInterval, logger))
		w = append(w, worker.NewReleaseGuard(releases, g.workerInterval, logger))
	}
	if !g.noDelivery {
		w = append(w, worker.NewDelivery(notifications, g.workerInterval, logger))
	}
	return w
}

// start runs the loops until ctx ends or the returned function is called,
// which also waits for them to return.
func (w workers) start(ctx context.Context) (stop func()) {
	stops := make([]func(), 0, len(w))
	for _, l := range w {
		stops = append(stops, l.Start(context.WithoutCancel(ctx)))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
