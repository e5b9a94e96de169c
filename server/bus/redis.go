package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// DefaultChannel is the one Redis channel every instance publishes to.
const DefaultChannel = "switchyard:changes"

// inboxSize bounds the events waiting for delivery to subscribers. The
// rueidis message hook must never block (it runs on the connection's
// reader), so a full inbox drops the event and asks subscribers to resync.
const inboxSize = 4096

// RedisConfig configures a Redis bus; its zero value uses DefaultChannel and
// a discarding logger.
type RedisConfig struct {
	Channel string
	Logger  *slog.Logger
	// OnResubscribe, when set, is told of every (re)subscription after the
	// first, for metrics.
	OnResubscribe func()
}

// Redis is the bus between instances: Redis pub/sub through rueidis on one
// channel with JSON payloads. Pub/sub is at-most-once, so after every
// (re)subscription, and whenever the inbox overflows, subscribers receive a
// local Resync event: they cannot prove they missed nothing.
type Redis struct {
	client  atomic.Pointer[rueidis.Client] // nil until the first connection
	cfg     RedisConfig
	inbox   chan Event
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.RWMutex
	subs    map[int]func(Event)
	next    int
	subbed  chan struct{} // closed at the first subscription
	subOnce sync.Once
}

var _ Bus = (*Redis)(nil)

// NewRedis starts a bus on url (redis://host:port/db). It does not wait for
// Redis: while Redis is unreachable, publishes fail (the writer logs it and
// the change log in PostgreSQL still delivers the change) and a background
// loop keeps connecting, so the server keeps serving
// (docs/reference/stream.md, Multiple instances).
func NewRedis(url string, cfg RedisConfig) (*Redis, error) {
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse REDIS_URL: %w", err)
	}
	opt.DisableCache = true // we only publish and subscribe
	opt.ConnWriteTimeout = 5 * time.Second
	if cfg.Channel == "" {
		cfg.Channel = DefaultChannel
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Redis{
		cfg: cfg, inbox: make(chan Event, inboxSize), cancel: cancel,
		done: make(chan struct{}), subs: map[int]func(Event){}, subbed: make(chan struct{}),
	}
	go r.deliver()
	go r.run(ctx, opt)
	return r, nil
}

// run connects (rueidis dials eagerly and fails while Redis is down, so
// retry with backoff) and then keeps the subscription open.
func (r *Redis) run(ctx context.Context, opt rueidis.ClientOption) {
	defer close(r.inbox)
	backoff := 100 * time.Millisecond
	for {
		client, err := rueidis.NewClient(opt)
		if err == nil {
			r.client.Store(&client)
			r.receive(ctx, client)
			return
		}
		r.cfg.Logger.Warn("redis unreachable; retrying", "err", err.Error(), "backoff", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// Publish sends events to every instance, this one included.
func (r *Redis) Publish(ctx context.Context, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cp := r.client.Load()
	if cp == nil {
		return errors.New("publish to redis: not connected")
	}
	client := *cp
	cmds := make(rueidis.Commands, 0, len(events))
	for _, e := range events {
		payload, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		cmds = append(cmds, client.B().Publish().Channel(r.cfg.Channel).Message(string(payload)).Build())
	}
	// One round trip, in order: Redis runs a connection's commands in the
	// order they arrive.
	for _, res := range client.DoMulti(ctx, cmds...) {
		if err := res.Error(); err != nil {
			return fmt.Errorf("publish to redis: %w", err)
		}
	}
	return nil
}

// Subscribe registers fn until cancel is called.
func (r *Redis) Subscribe(fn func(Event)) (cancel func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.next
	r.next++
	r.subs[id] = fn
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.subs, id)
	}
}

// Ready is closed once the first subscription is confirmed; tests wait on it.
func (r *Redis) Ready() <-chan struct{} { return r.subbed }

// Close stops receiving and closes the connection.
func (r *Redis) Close() error {
	r.cancel()
	if cp := r.client.Load(); cp != nil {
		(*cp).Close()
	}
	<-r.done
	return nil
}

// receive keeps one subscription open. rueidis reconnects and resubscribes
// by itself inside Receive; if Receive returns anyway, retry with backoff.
func (r *Redis) receive(ctx context.Context, client rueidis.Client) {
	backoff := 100 * time.Millisecond
	first := true
	hook := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind != "subscribe" {
			return
		}
		r.subOnce.Do(func() { close(r.subbed) })
		// Anything published while we were not subscribed is lost: even at
		// the first subscription, if Redis came up after streams opened.
		if !first && r.cfg.OnResubscribe != nil {
			r.cfg.OnResubscribe()
		}
		first = false
		r.push(Event{Op: OpResync})
	})
	for ctx.Err() == nil {
		err := client.Receive(hook, client.B().Subscribe().Channel(r.cfg.Channel).Build(), func(m rueidis.PubSubMessage) {
			var e Event
			if err := json.Unmarshal([]byte(m.Message), &e); err != nil {
				r.cfg.Logger.Warn("drop malformed bus message", "err", err.Error())
				return
			}
			r.push(e)
		})
		if ctx.Err() != nil || errors.Is(err, rueidis.ErrClosing) {
			return
		}
		r.cfg.Logger.Warn("redis subscription ended; retrying", "err", fmt.Sprint(err), "backoff", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// push hands an event to the delivery goroutine without ever blocking the
// Redis reader; on overflow the event is replaced by a Resync.
func (r *Redis) push(e Event) {
	select {
	case r.inbox <- e:
	default:
		select {
		case r.inbox <- Event{Op: OpResync}:
		default: // the inbox is full of events already; a Resync is queued behind them at worst
		}
	}
}

// deliver runs subscribers one event at a time, in arrival order.
func (r *Redis) deliver() {
	defer close(r.done)
	for e := range r.inbox {
		r.mu.RLock()
		for _, fn := range r.subs {
			fn(e)
		}
		r.mu.RUnlock()
	}
}
