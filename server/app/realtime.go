package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/metrics"
	"github.com/switchyard/switchyard/server/ofrep"
	"github.com/switchyard/switchyard/server/stream"
)

// realtimeOptions are the test knobs of real-time delivery.
type realtimeOptions struct {
	busChannel   string
	keepAlive    time.Duration
	pollInterval time.Duration
}

// WithBusChannel makes the App use its own Redis channel, so tests sharing
// one Redis do not hear each other. It wins over REDIS_CHANNEL.
func WithBusChannel(name string) Option {
	return func(o *options) { o.busChannel = name }
}

// WithStreamTiming shortens the stream keep-alive and the change-log poll
// for tests.
func WithStreamTiming(keepAlive, poll time.Duration) Option {
	return func(o *options) { o.keepAlive, o.pollInterval = keepAlive, poll }
}

// realtime is the bus, the metrics and the stream hub of one instance.
type realtime struct {
	bus     bus.Bus
	metrics *metrics.Metrics
	hub     *stream.Hub
	unsub   func()
	opts    realtimeOptions
	// exposures records OFREP evaluations as impressions (server/ofrep).
	exposures *ofrep.Exposures
}

// newRealtime chooses the bus: Redis, unless REDIS_URL is empty
// (decisions.md: the in-process bus, one instance only).
func newRealtime(cfg config.Config, logger *slog.Logger, o realtimeOptions) (*realtime, error) {
	rt := &realtime{metrics: metrics.New(), opts: o}
	if !cfg.UsesRedis() {
		rt.bus = bus.NewMemory()
		return rt, nil
	}
	channel := cfg.RedisChannel
	if o.busChannel != "" {
		channel = o.busChannel
	}
	r, err := bus.NewRedis(cfg.RedisURL, bus.RedisConfig{
		Channel: channel, Logger: logger, OnResubscribe: rt.metrics.BusResubscribes.Inc,
	})
	if err != nil {
		return nil, err
	}
	rt.bus = r
	return rt, nil
}

// startHub starts the stream hub on svc and feeds it every bus event; idSvc
// sees each one first, to forget the credentials it ends.
func (rt *realtime) startHub(ctx context.Context, svc *core.Service, idSvc *identity.Service, logger *slog.Logger) error {
	rt.hub = stream.New(svc, stream.Config{
		Logger: logger, Metrics: rt.metrics, PollInterval: rt.opts.pollInterval, OnEvent: idSvc.Invalidate,
	})
	if err := rt.hub.Start(ctx); err != nil {
		return err
	}
	rt.unsub = rt.bus.Subscribe(rt.hub.Notify)
	return nil
}

// close stops the hub (ending every stream) and the bus.
func (rt *realtime) close() {
	if rt.unsub != nil {
		rt.unsub()
	}
	if rt.hub != nil {
		rt.hub.Close()
	}
	if rt.exposures != nil {
		rt.exposures.Close() // flushes what waits
	}
	_ = rt.bus.Close()
}
