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
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"compress/gzip"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/auth"
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

// readTimeout bounds each read of the hub's Source.
const readTimeout = 30 * time.Second

// Hub fans changes out to the stream connections of this instance.
//
// Locking (STYLE §16): h.mu guards the environment table, the set of every
// subscriber and closed; each envState's mu guards that environment's
// current view and its subscribers. Both are held only for map and pointer
// work: never across a read of the Source, an encoding or a fan-out, and
// never one inside the other. A change is read and encoded with no lock
// held, installed with a compare-and-swap of the environment's view, and
// fanned out to a copy of the subscribers taken in the same critical
// section as the install. Changes are applied by one goroutine (run), so
// fan-outs never overlap and every connection receives them in order.
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

	// beforeFanout, set by tests only, runs after a change is installed and
	// before it is fanned out.
	beforeFanout func()
}

// envState is one environment's cache and connections.
type envState struct {
	// loaded is closed when the first read of the environment ends, with
	// err set if it failed; nothing else is read before then.
	loaded chan struct{}
	err    error

	// view is the current version of the environment's flags. It is
	// written under mu (so a registration and an install are ordered) and
	// read without it by snapshots.
	view atomic.Pointer[view]

	mu   sync.Mutex
	subs map[*Subscriber]int // index into list
	list []*Subscriber       // the same set, copied for a fan-out
	dead bool                // dropped by a resync: take no more subscribers
}

// add registers s; call with st.mu held.
func (st *envState) add(s *Subscriber) {
	st.subs[s] = len(st.list)
	st.list = append(st.list, s)
}

// remove unregisters s; call with st.mu held.
func (st *envState) remove(s *Subscriber) {
	i, ok := st.subs[s]
	if !ok {
		return
	}
	last := len(st.list) - 1
	st.list[i] = st.list[last]
	st.subs[st.list[i]] = i
	st.list[last] = nil
	st.list = st.list[:last]
	delete(st.subs, s)
}

// view is one version of an environment's flags. It never changes once
// published: a change builds the next view, so readers need no lock, and
// what is derived from a view (the bootstrap, the snapshot) is computed at
// most once per view.
type view struct {
	envID uuid.UUID
	flags map[string]*entry
	keys  []string // of flags, sorted; shared between views when unchanged

	bootOnce sync.Once
	boot     []byte
	snapOnce sync.Once
	snap     *Snapshot
	evalOnce sync.Once
	compiled *eval.Snapshot
}

func newView(envID uuid.UUID, flags map[string]*entry) *view {
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &view{envID: envID, flags: flags, keys: keys}
}

// with returns the next view: v with key set to e, or removed when e is nil.
func (v *view) with(key string, e *entry) *view {
	flags := maps.Clone(v.flags)
	keys := v.keys
	i, found := slices.BinarySearch(keys, key)
	switch {
	case e == nil:
		delete(flags, key)
		if found {
			keys = slices.Delete(slices.Clone(keys), i, i+1)
		}
	default:
		flags[key] = e
		if !found {
			keys = slices.Insert(slices.Clone(keys), i, key)
		}
	}
	return &view{envID: v.envID, flags: flags, keys: keys}
}

// bootstrap is the update events of every flag, ordered by key.
func (v *view) bootstrap() []byte {
	v.bootOnce.Do(func() {
		n := 0
		for _, k := range v.keys {
			n += len(v.flags[k].frame)
		}
		b := make([]byte, 0, n)
		for _, k := range v.keys {
			b = append(b, v.flags[k].frame...)
		}
		v.boot = b
	})
	return v.boot
}

// snapshot is the snapshot endpoint's body for this view.
func (v *view) snapshot() *Snapshot {
	v.snapOnce.Do(func() {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(v.flags[k].json)
		}
		b.WriteByte(']')
		sum := sha256.Sum256(b.Bytes())
		v.snap = &Snapshot{Body: b.Bytes(), ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	})
	return v.snap
}

// evaluation is the view's flags compiled for sdkgo/eval, for remote
// evaluation (server/ofrep): compiled on first use, once per view, from the
// same encoded flags the stream and the snapshot serve.
func (v *view) evaluation() *eval.Snapshot {
	v.evalOnce.Do(func() {
		flags := make([]eval.Flag, 0, len(v.keys))
		for _, k := range v.keys {
			var f eval.Flag
			if err := json.Unmarshal(v.flags[k].json, &f); err == nil { // encoded by newEntry: cannot fail
				flags = append(flags, f)
			}
		}
		v.compiled = eval.Compile(flags)
	})
	return v.compiled
}

// entry is one flag, encoded once for every connection and snapshot.
type entry struct {
	version int64
	json    []byte // the flag object
	frame   []byte // its complete UPSERT update event
}

// Snapshot is an environment's flags as the snapshot endpoint serves them.
// It is built once per change and shared by every request: never modify it.
type Snapshot struct {
	Body []byte // JSON array of flags ordered by key
	ETag string // strong entity tag of Body

	gzipOnce sync.Once
	gzip     []byte
}

// Gzip returns Body compressed with gzip. It is compressed on first use
// and shared by every later request for the same snapshot.
func (s *Snapshot) Gzip() []byte {
	s.gzipOnce.Do(func() {
		var b bytes.Buffer
		// Writes to a bytes.Buffer cannot fail.
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(s.Body)
		_ = zw.Close()
		s.gzip = b.Bytes()
	})
	return s.gzip
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
	subs := slices.Collect(maps.Keys(h.subs))
	h.mu.Unlock()
	// A subscription still being registered sees closed when it reaches
	// h.subs and ends itself.
	for _, s := range subs {
		s.kick()
	}
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
		if ref, ok := auth.RevokedRef(e.Key); ok {
			h.revoke(ref)
		}
	case bus.OpUpsert, bus.OpDelete:
		h.refresh(ctx, e)
	}
}

// refresh re-reads one flag and sends what changed to the environment's
// connections. The read and the encoding happen with no lock held; the
// result is installed only if the environment's view is still the one it
// was computed from (a compare-and-swap, so the cache never moves
// backwards), and fanned out to the connections registered at that
// instant. A connection registered after the install has the change in its
// bootstrap; one registered before gets it on its queue: never both,
// never neither.
func (h *Hub) refresh(ctx context.Context, e bus.Event) {
	start := time.Now()
	h.mu.Lock()
	st := h.envs[e.EnvID]
	h.mu.Unlock()
	if st == nil {
		return // nobody here holds this environment; it loads fresh when needed
	}
	// A first read in flight may predate this change: apply it after.
	select {
	case <-st.loaded:
	case <-ctx.Done():
		return
	}
	if st.err != nil {
		return // the failed state is dropped; the next reader loads afresh
	}
	for attempt := 0; ; attempt++ {
		v0 := st.view.Load()
		cur, had := v0.flags[e.Key]
		switch {
		case e.Op == bus.OpUpsert && had && e.Version > 0 && cur.version >= e.Version:
			return // already applied (the bus and the change log both deliver it)
		case e.Op == bus.OpDelete && !had:
			return
		}
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		f, exists, err := h.src.SDKFlag(rctx, e.EnvID, e.Key)
		cancel()
		if err != nil {
			// The change is committed but unreadable now: clients cannot be
			// proven current, so make them rebuild.
			h.cfg.Logger.Warn("re-read changed flag", "env_id", e.EnvID, "flag_key", e.Key, "err", err.Error())
			h.overflow.Store(true)
			return
		}
		var frames [][]byte
		var next *view
		switch {
		case !exists && had:
			next = v0.with(e.Key, nil)
			frames = append(frames, deleteFrame(e.EnvID, e.Key))
		case exists && (!had || f.Version != cur.version):
			ent, err := newEntry(e.EnvID, f)
			if err != nil {
				h.cfg.Logger.Error("encode flag", "flag_key", e.Key, "err", err.Error())
				return
			}
			if had && f.Version < cur.version {
				// Deleted and created again: clients keep the highest version,
				// so they must drop the old flag first.
				frames = append(frames, deleteFrame(e.EnvID, e.Key))
			}
			next = v0.with(e.Key, ent)
			frames = append(frames, ent.frame)
		default:
			return
		}
		st.mu.Lock()
		if st.dead {
			st.mu.Unlock()
			return // a resync ended every connection of this state
		}
		if st.view.Load() != v0 {
			// Someone installed a view since the read: ours may be older.
			st.mu.Unlock()
			if attempt < 3 {
				continue
			}
			h.overflow.Store(true)
			return
		}
		st.view.Store(next)
		subs := slices.Clone(st.list)
		st.mu.Unlock()
		if h.beforeFanout != nil {
			h.beforeFanout()
		}
		for _, s := range subs {
			if s.send(frames) {
				h.cfg.Logger.Info("disconnect slow stream client", "env_id", e.EnvID)
				if m := h.cfg.Metrics; m != nil {
					m.SlowClients.Inc()
				}
			}
		}
		if m := h.cfg.Metrics; m != nil {
			m.FanoutSeconds.Observe(time.Since(start).Seconds())
		}
		return
	}
}

// resync drops every cache and ends every stream; clients reconnect and
// rebuild from the replay. The change log position moves to now: the
// rebuilt caches will read everything committed before.
func (h *Hub) resync(ctx context.Context, why string) {
	seq, err := h.src.LatestChangeSeq(ctx)
	h.mu.Lock()
	if err == nil {
		h.lastSeq = seq
	}
	old := h.envs
	h.envs = map[uuid.UUID]*envState{}
	subs := slices.Collect(maps.Keys(h.subs))
	h.mu.Unlock()
	// A subscription registered in an old state but not yet in h.subs is
	// ended through the state; one arriving later sees it dead and loads
	// the new one.
	for _, st := range old {
		st.mu.Lock()
		st.dead = true
		subs = append(subs, st.list...)
		st.mu.Unlock()
	}
	for _, s := range subs {
		s.kick()
	}
	h.cfg.Logger.Info("stream resync: ending every stream", "reason", why, "streams", len(subs))
	if m := h.cfg.Metrics; m != nil {
		m.Resyncs.Inc()
	}
}

// revoke ends the streams that a credential authenticated (an SDK key, a
// token, a session, or any of a user's).
func (h *Hub) revoke(ref string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if slices.Contains(s.creds, ref) {
			s.kick()
		}
	}
}

// acquire returns an environment's state, loaded. The first caller reads
// the flags, with no lock held; concurrent callers wait for that one read
// (a single flight) instead of issuing their own.
func (h *Hub) acquire(ctx context.Context, envID uuid.UUID) (*envState, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	st := h.envs[envID]
	first := st == nil
	if first {
		st = &envState{loaded: make(chan struct{}), subs: map[*Subscriber]int{}}
		h.envs[envID] = st
	}
	h.mu.Unlock()
	if first {
		h.load(ctx, envID, st)
	}
	select {
	case <-st.loaded:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if st.err != nil {
		return nil, st.err
	}
	return st, nil
}

// load reads an environment's flags into st and closes st.loaded. The read
// outlives the caller's cancellation (others may be waiting for it) but not
// readTimeout. A failed state leaves the table so the next caller retries.
func (h *Hub) load(ctx context.Context, envID uuid.UUID, st *envState) {
	defer close(st.loaded)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
	defer cancel()
	st.err = func() error {
		flags, err := h.src.SDKFlags(ctx, envID)
		if err != nil {
			return err
		}
		entries := make(map[string]*entry, len(flags))
		for _, f := range flags {
			e, err := newEntry(envID, f)
			if err != nil {
				return err
			}
			entries[f.Key] = e
		}
		st.view.Store(newView(envID, entries))
		return nil
	}()
	if st.err != nil {
		h.mu.Lock()
		if h.envs[envID] == st {
			delete(h.envs, envID)
		}
		h.mu.Unlock()
	}
}

// Subscribe registers a connection for envs and returns, atomically with
// the registration, the update events of every current flag (the
// bootstrap) and their number. Updates committed after that point arrive on
// the subscriber's queue, so nothing is lost between replay and live. The
// bootstrap may be shared with other connections: never modify it.
// creds are the credential references (auth.Principal.CredentialRefs) whose
// revocation ends the stream.
func (h *Hub) Subscribe(ctx context.Context, envs []uuid.UUID, creds []string) (*Subscriber, []byte, int, error) {
	s := &Subscriber{envs: envs, creds: creds, max: h.cfg.QueueSize, wake: make(chan struct{}, 1), done: make(chan struct{})}
	parts := make([][]byte, 0, len(envs))
	n := 0
	for _, id := range envs {
		var v *view
		for v == nil {
			st, err := h.acquire(ctx, id)
			if err != nil {
				h.detach(s)
				if errors.Is(err, ErrClosed) {
					return nil, nil, 0, err
				}
				return nil, nil, 0, fmt.Errorf("load environment %s: %w", id, err)
			}
			// Registering and reading the view under st.mu cuts the
			// bootstrap and the live queue at one instant (see refresh).
			st.mu.Lock()
			if !st.dead { // else a resync dropped it meanwhile: load anew
				st.add(s)
				v = st.view.Load()
				s.states = append(s.states, st)
			}
			st.mu.Unlock()
		}
		parts = append(parts, v.bootstrap())
		n += len(v.keys)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.detach(s)
		return nil, nil, 0, ErrClosed
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	if m := h.cfg.Metrics; m != nil {
		for _, id := range envs {
			m.OpenStreams.WithLabelValues(id.String()).Inc()
		}
	}
	if len(parts) == 1 {
		return s, parts[0], n, nil
	}
	return s, bytes.Join(parts, nil), n, nil
}

// detach removes s from the environments it was registered in.
func (h *Hub) detach(s *Subscriber) {
	for _, st := range s.states {
		st.mu.Lock()
		st.remove(s)
		st.mu.Unlock()
	}
}

// Unsubscribe removes a connection.
func (h *Hub) Unsubscribe(s *Subscriber) {
	h.mu.Lock()
	_, ok := h.subs[s]
	delete(h.subs, s)
	h.mu.Unlock()
	if !ok {
		return
	}
	h.detach(s)
	if m := h.cfg.Metrics; m != nil {
		for _, id := range s.envs {
			m.OpenStreams.WithLabelValues(id.String()).Dec()
		}
	}
	s.kick()
}

// Snapshot returns an environment's flags as one JSON array, encoded once
// per change and shared by every request. It takes no lock beyond the
// environment table's: a change being read or fanned out never delays it.
func (h *Hub) Snapshot(ctx context.Context, envID uuid.UUID) (*Snapshot, error) {
	st, err := h.acquire(ctx, envID)
	if err != nil {
		return nil, err
	}
	return st.view.Load().snapshot(), nil
}

// Evaluation returns an environment's flags compiled for the evaluator, and
// the snapshot's ETag, which names their version. Like Snapshot it takes no
// lock beyond the environment table's and reads no database once loaded.
func (h *Hub) Evaluation(ctx context.Context, envID uuid.UUID) (*eval.Snapshot, string, error) {
	st, err := h.acquire(ctx, envID)
	if err != nil {
		return nil, "", err
	}
	v := st.view.Load()
	return v.evaluation(), v.snapshot().ETag, nil
}

// ETag is the snapshot ETag of the subscriber's first environment as it is
// now, read from the subscriber's own registration: a woken subscriber
// needs no hub lock (10,000 woken at once would queue on it) and no compiled
// evaluation, only the tag.
func (s *Subscriber) ETag() string {
	return s.states[0].view.Load().snapshot().ETag
}

// Subscriber is one stream connection. Its queue is a slice that grows only
// while the connection is behind (an idle connection holds no buffer) and
// is drained in batches, so a burst costs one write and one flush.
type Subscriber struct {
	envs   []uuid.UUID
	creds  []string
	max    int
	states []*envState // where it is registered; set by Subscribe only

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

// send queues frames, together, without ever blocking the hub. A full
// queue ends the stream (the client reconnects and replays) and reports
// true; a stream that has already ended takes nothing and reports false.
func (s *Subscriber) send(frames [][]byte) (dropped bool) {
	select {
	case <-s.done:
		return false
	default:
	}
	s.mu.Lock()
	if len(s.queue)+len(frames) > s.max {
		s.mu.Unlock()
		s.kick()
		return true
	}
	s.queue = append(s.queue, frames...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
	return false
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
