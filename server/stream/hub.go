// Package stream is the real-time side of Switchyard: the hub that keeps
// each environment's segment-expanded flags in memory, encoded once, and
// fans every committed change out to the stream connections of that
// environment on this instance.
//
// Changes reach the hub as notifications, from the bus (fast) and from the
// change log in PostgreSQL (a safety net polled every second). Either way
// the hub re-reads the committed flag and compares versions, so duplicate,
// late or reordered notifications are harmless (STYLE §6, "notify, then
// read"). When messages may have been lost (a Redis reconnect, an overflow)
// it resyncs: drops its caches and ends every stream, and clients reconnect
// and rebuild from the replay (decisions.md, Stream).
package stream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/metrics"
)

// Source is what the hub reads: committed, segment-expanded flags and the
// change log. *core.Service implements it.
type Source interface {
	SDKFlags(ctx context.Context, envID uuid.UUID) ([]eval.Flag, error)
	SDKFlag(ctx context.Context, envID uuid.UUID, key string) (eval.Flag, bool, error)
	LatestChangeSeq(ctx context.Context) (int64, error)
	ChangesSince(ctx context.Context, seq int64, limit int32) ([]core.Change, error)
	PruneChangeLog(ctx context.Context) (int64, error)
}

var _ Source = (*core.Service)(nil)

// Config tunes a Hub; its zero value works.
type Config struct {
	Logger       *slog.Logger
	Metrics      *metrics.Metrics // nil: none
	PollInterval time.Duration    // change-log poll; default 1 s
	QueueSize    int              // live updates a connection may have waiting; default 1024
	// OnEvent, when set, sees every notification the hub handles, from the
	// bus and from the change log, before the hub acts on it; the service
	// invalidates its SDK-key cache with it.
	OnEvent func(bus.Event)
}

// ErrClosed is returned by Subscribe once the hub is shutting down.
var ErrClosed = errors.New("stream hub is closed")

// Hub fans changes out to the stream connections of this instance.
type Hub struct {
	src      Source
	cfg      Config
	notify   chan bus.Event
	overflow atomic.Bool

	mu      sync.Mutex
	envs    map[uuid.UUID]*envState
	subs    map[*Subscriber]struct{}
	closed  bool
	lastSeq int64

	stop context.CancelFunc
	done chan struct{}
}

// envState is one environment's cache and connections.
type envState struct {
	flags    map[string]*entry
	subs     map[*Subscriber]struct{}
	snapshot *Snapshot // memoised until the next change
}

// entry is one flag, encoded once for every connection and snapshot.
type entry struct {
	version int64
	json    []byte // the flag object
	frame   []byte // its complete UPSERT update event
}

// Snapshot is an environment's flags as the snapshot endpoint serves them.
type Snapshot struct {
	Body []byte // JSON array of flags ordered by key
	ETag string // strong entity tag of Body
}

// New returns a hub reading from src. Start it before use.
func New(src Source, cfg Config) *Hub {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.QueueSize <= 0 {
		// Enough for a segment edit that re-broadcasts hundreds of flags at
		// once; the queue grows only while a connection is behind.
		cfg.QueueSize = 1024
	}
	return &Hub{
		src: src, cfg: cfg, notify: make(chan bus.Event, 4096),
		envs: map[uuid.UUID]*envState{}, subs: map[*Subscriber]struct{}{}, done: make(chan struct{}),
	}
}

// Start reads the change log's position and starts the loop that handles
// notifications and polls the log.
func (h *Hub) Start(ctx context.Context) error {
	seq, err := h.src.LatestChangeSeq(ctx)
	if err != nil {
		return fmt.Errorf("start stream hub: %w", err)
	}
	h.lastSeq = seq
	ctx, h.stop = context.WithCancel(context.WithoutCancel(ctx))
	go h.run(ctx)
	return nil
}

// Notify hands the hub a change notification. It never blocks (the bus
// calls it on its delivery goroutine); when the queue is full the hub
// resyncs instead.
func (h *Hub) Notify(e bus.Event) {
	select {
	case h.notify <- e:
	default:
		h.overflow.Store(true)
	}
}

// Close ends every stream and stops the loop; later subscriptions fail.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	for s := range h.subs {
		s.kick()
	}
	h.mu.Unlock()
	if h.stop != nil {
		h.stop()
		<-h.done
	}
}

func (h *Hub) run(ctx context.Context) {
	defer close(h.done)
	poll := time.NewTicker(h.cfg.PollInterval)
	defer poll.Stop()
	prune := time.NewTicker(10 * time.Minute)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-h.notify:
			h.handle(ctx, e)
		case <-poll.C:
			h.poll(ctx)
		case <-prune.C:
			if _, err := h.src.PruneChangeLog(ctx); err != nil {
				h.cfg.Logger.Warn("prune change log", "err", err.Error())
			}
		}
		if h.overflow.Swap(false) {
			h.resync(ctx, "notification queue overflow")
		}
	}
}

// poll applies the change log entries committed since the last poll. Most
// were already handled through the bus; their versions make that cheap.
func (h *Hub) poll(ctx context.Context) {
	for {
		changes, err := h.src.ChangesSince(ctx, h.lastSeq, 1000)
		if err != nil {
			h.cfg.Logger.Warn("poll change log", "err", err.Error())
			return
		}
		for _, c := range changes {
			h.handle(ctx, c.Event)
			h.lastSeq = c.Seq
		}
		if len(changes) < 1000 {
			return
		}
	}
}

// handle applies one notification.
func (h *Hub) handle(ctx context.Context, e bus.Event) {
	if h.cfg.OnEvent != nil {
		h.cfg.OnEvent(e)
	}
	switch e.Op {
	case bus.OpResync:
		h.resync(ctx, "the bus may have lost messages")
	case bus.OpRevoke:
		if id, ok := core.RevokedKeyID(e); ok {
			h.revoke(id)
		}
	case bus.OpUpsert, bus.OpDelete:
		h.refresh(ctx, e)
	}
}

// refresh re-reads one flag and sends what changed to the environment's
// connections. The read happens under the hub lock, like every cache load,
// so the cache never moves backwards.
func (h *Hub) refresh(ctx context.Context, e bus.Event) {
	start := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.envs[e.EnvID]
	if st == nil {
		return // nobody here holds this environment; it loads fresh when needed
	}
	cur, had := st.flags[e.Key]
	switch {
	case e.Op == bus.OpUpsert && had && e.Version > 0 && cur.version >= e.Version:
		return // already applied (the bus and the change log both deliver it)
	case e.Op == bus.OpDelete && !had:
		return
	}
	f, exists, err := h.src.SDKFlag(ctx, e.EnvID, e.Key)
	if err != nil {
		// The change is committed but unreadable now: clients cannot be
		// proven current, so make them rebuild.
		h.cfg.Logger.Warn("re-read changed flag", "env_id", e.EnvID, "flag_key", e.Key, "err", err.Error())
		h.overflow.Store(true)
		return
	}
	var frames [][]byte
	switch {
	case !exists && had:
		delete(st.flags, e.Key)
		frames = append(frames, deleteFrame(e.EnvID, e.Key))
	case exists && (!had || f.Version != cur.version):
		next, err := newEntry(e.EnvID, f)
		if err != nil {
			h.cfg.Logger.Error("encode flag", "flag_key", e.Key, "err", err.Error())
			return
		}
		if had && f.Version < cur.version {
			// Deleted and created again: clients keep the highest version,
			// so they must drop the old flag first.
			frames = append(frames, deleteFrame(e.EnvID, e.Key))
		}
		st.flags[e.Key] = next
		frames = append(frames, next.frame)
	default:
		return
	}
	st.snapshot = nil
	for s := range st.subs {
		for _, fr := range frames {
			if !s.send(fr) {
				h.cfg.Logger.Info("disconnect slow stream client", "env_id", e.EnvID)
				if m := h.cfg.Metrics; m != nil {
					m.SlowClients.Inc()
				}
				break
			}
		}
	}
	if m := h.cfg.Metrics; m != nil {
		m.FanoutSeconds.Observe(time.Since(start).Seconds())
	}
}

// resync drops every cache and ends every stream; clients reconnect and
// rebuild from the replay. The change log position moves to now: the
// rebuilt caches will read everything committed before.
func (h *Hub) resync(ctx context.Context, why string) {
	seq, err := h.src.LatestChangeSeq(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.lastSeq = seq
	}
	h.envs = map[uuid.UUID]*envState{}
	for s := range h.subs {
		s.kick()
	}
	h.cfg.Logger.Info("stream resync: ending every stream", "reason", why, "streams", len(h.subs))
	if m := h.cfg.Metrics; m != nil {
		m.Resyncs.Inc()
	}
}

// revoke ends the streams of a revoked SDK key.
func (h *Hub) revoke(keyID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.keyID == keyID {
			s.kick()
		}
	}
}

// load returns an environment's state, reading it from the database the
// first time. Call with h.mu held.
func (h *Hub) load(ctx context.Context, envID uuid.UUID) (*envState, error) {
	if st := h.envs[envID]; st != nil {
		return st, nil
	}
	flags, err := h.src.SDKFlags(ctx, envID)
	if err != nil {
		return nil, err
	}
	st := &envState{flags: make(map[string]*entry, len(flags)), subs: map[*Subscriber]struct{}{}}
	for _, f := range flags {
		e, err := newEntry(envID, f)
		if err != nil {
			return nil, err
		}
		st.flags[f.Key] = e
	}
	h.envs[envID] = st
	return st, nil
}

// Subscribe registers a connection for envs and returns, atomically with
// the registration, the update events of every current flag (the
// bootstrap) and their number. Updates committed after that point arrive on
// the subscriber's queue, so nothing is lost between replay and live.
// keyID names the SDK key whose revocation ends the stream (0 for none).
func (h *Hub) Subscribe(ctx context.Context, envs []uuid.UUID, keyID int64) (*Subscriber, []byte, int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, 0, ErrClosed
	}
	s := &Subscriber{envs: envs, keyID: keyID, max: h.cfg.QueueSize, wake: make(chan struct{}, 1), done: make(chan struct{})}
	var boot bytes.Buffer
	n := 0
	for _, id := range envs {
		st, err := h.load(ctx, id)
		if err != nil {
			for _, prev := range envs {
				if prev == id {
					break
				}
				delete(h.envs[prev].subs, s)
			}
			return nil, nil, 0, fmt.Errorf("load environment %s: %w", id, err)
		}
		st.subs[s] = struct{}{}
		for _, k := range sortedKeys(st.flags) {
			boot.Write(st.flags[k].frame)
			n++
		}
	}
	h.subs[s] = struct{}{}
	if m := h.cfg.Metrics; m != nil {
		for _, id := range envs {
			m.OpenStreams.WithLabelValues(id.String()).Inc()
		}
	}
	return s, boot.Bytes(), n, nil
}

// Unsubscribe removes a connection.
func (h *Hub) Unsubscribe(s *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	for _, id := range s.envs {
		if st := h.envs[id]; st != nil {
			delete(st.subs, s)
		}
	}
	if m := h.cfg.Metrics; m != nil {
		for _, id := range s.envs {
			m.OpenStreams.WithLabelValues(id.String()).Dec()
		}
	}
	s.kick()
}

// Snapshot returns an environment's flags as one JSON array, encoded once
// per change and shared by every request.
func (h *Hub) Snapshot(ctx context.Context, envID uuid.UUID) (*Snapshot, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	st, err := h.load(ctx, envID)
	if err != nil {
		return nil, err
	}
	if st.snapshot == nil {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, k := range sortedKeys(st.flags) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(st.flags[k].json)
		}
		b.WriteByte(']')
		sum := sha256.Sum256(b.Bytes())
		st.snapshot = &Snapshot{Body: b.Bytes(), ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	}
	return st.snapshot, nil
}

// Subscriber is one stream connection. Its queue is a slice that grows only
// while the connection is behind (an idle connection holds no buffer) and
// is drained in batches, so a burst costs one write and one flush.
type Subscriber struct {
	envs  []uuid.UUID
	keyID int64
	max   int

	mu    sync.Mutex
	queue [][]byte
	wake  chan struct{} // holds a token while updates wait
	done  chan struct{}
	once  sync.Once
}

// Wake receives when updates are waiting; Take them then.
func (s *Subscriber) Wake() <-chan struct{} { return s.wake }

// Take returns the waiting updates, oldest first, ready to write.
func (s *Subscriber) Take() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// Done is closed when the hub ends the stream: it fell behind, the hub
// resynced or closed, or its SDK key was revoked.
func (s *Subscriber) Done() <-chan struct{} { return s.done }

// send queues a frame without ever blocking the hub; a full queue ends the
// stream (the client reconnects and replays) and reports false.
func (s *Subscriber) send(frame []byte) bool {
	select {
	case <-s.done:
		return false
	default:
	}
	s.mu.Lock()
	if len(s.queue) >= s.max {
		s.mu.Unlock()
		s.kick()
		return false
	}
	s.queue = append(s.queue, frame)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
	return true
}

func (s *Subscriber) kick() { s.once.Do(func() { close(s.done) }) }

func newEntry(envID uuid.UUID, f eval.Flag) (*entry, error) {
	js, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	var frame bytes.Buffer
	frame.WriteString(`event: update` + "\n" + `data: {"type":"UPSERT","env_id":"`)
	frame.WriteString(envID.String())
	frame.WriteString(`","flag":`)
	frame.Write(js)
	frame.WriteString("}\n\n")
	return &entry{version: f.Version, json: js, frame: frame.Bytes()}, nil
}

func deleteFrame(envID uuid.UUID, key string) []byte {
	data, _ := json.Marshal(map[string]string{"type": "DELETE", "env_id": envID.String(), "key": key})
	return []byte("event: update\ndata: " + string(data) + "\n\n")
}

func sortedKeys(m map[string]*entry) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
