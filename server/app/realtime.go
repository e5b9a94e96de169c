package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/server/agree"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/follow"
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
	// exposureFlush is how often OFREP exposures are written (default 1 s).
	exposureFlush time.Duration
	// lease and pollLease replace the instances' leases (server/agree).
	lease, pollLease time.Duration
	noAgree          bool
}

// WithoutAgreement runs the instance as if it were alone even over Redis:
// writes wait for no other instance and reads trust the caches. It exists
// to measure what agreement costs (bench/agree); a deployment never runs
// with it.
func WithoutAgreement() Option {
	return func(o *options) { o.noAgree = true }
}

// WithLeases replaces the bus lease and the change-log lease with which the
// instances agree (agree.DefaultLease, agree.DefaultPollLease).
func WithLeases(bus, poll time.Duration) Option {
	return func(o *options) { o.lease, o.pollLease = bus, poll }
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

// WithExposureFlush sets how often recorded OFREP evaluations are written
// (server/ofrep.ExposuresConfig.FlushInterval); tests lengthen it to see
// what shutdown writes.
func WithExposureFlush(d time.Duration) Option {
	return func(o *options) { o.exposureFlush = d }
}

// realtime is the bus, the change follower, the metrics and the stream hub
// of one instance.
type realtime struct {
	bus      bus.Bus
	group    *agree.Group // nil with the in-process bus: one instance
	follower *follow.Follower
	metrics  *metrics.Metrics
	hub      *stream.Hub
	unsub    func()
	opts     realtimeOptions
	// exposures records OFREP evaluations as impressions and summary
	// counts (server/ofrep).
	exposures *ofrep.Exposures
}

// newRealtime chooses the bus: Redis, unless REDIS_URL is empty (the in-process
// bus, one instance only: docs/reference/stream.md, Multiple instances).
// Writers publish through the change follower it returns, which reads the
// change log on pool.
func newRealtime(cfg config.Config, pool *pgxpool.Pool, now func() time.Time, logger *slog.Logger, o realtimeOptions) (*realtime, error) {
	rt := &realtime{metrics: metrics.New(), opts: o}
	if cfg.UsesRedis() {
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
		if !o.noAgree {
			rt.group = agree.New(agree.Config{Bus: r, Logger: logger, Lease: o.lease, PollLease: o.pollLease, OnWaitCut: rt.metrics.WriteWaitsCut.Inc})
		}
	} else {
		rt.bus = bus.NewMemory()
	}
	rt.follower = follow.New(follow.NewLog(pool, now), rt.bus, follow.Config{Logger: logger, PollInterval: o.pollInterval, Group: rt.group, OnCatchUp: rt.metrics.CatchUps.Inc})
	return rt, nil
}

// startHub starts the stream hub on svc behind the change follower, which
// applies every committed change, from the bus, the change log or this
// instance's writes, to idSvc's SDK-key cache and then to the hub.
func (rt *realtime) startHub(ctx context.Context, svc *core.Service, idSvc *identity.Service, logger *slog.Logger) error {
	rt.hub = stream.New(svc, stream.Config{Logger: logger, Metrics: rt.metrics, CaughtUp: rt.follower.CaughtUp})
	keys := follow.CacheFunc(func(_ context.Context, e bus.Event) error { idSvc.Invalidate(e); return nil })
	if err := rt.follower.Start(ctx, keys, rt.hub); err != nil {
		return fmt.Errorf("start change follower: %w", err)
	}
	rt.unsub = rt.bus.Subscribe(rt.follower.Notify)
	if rt.group != nil {
		rt.group.Start()
	}
	return nil
}

// close stops the hub (ending every stream) and the bus.
func (rt *realtime) close() {
	if rt.group != nil {
		rt.group.Close() // no write waits for this instance from here
	}
	if rt.unsub != nil {
		rt.unsub()
	}
	rt.follower.Close()
	if rt.hub != nil {
		rt.hub.Close()
	}
	if rt.exposures != nil {
		rt.exposures.Close() // flushes what waits
	}
	_ = rt.bus.Close()
}
