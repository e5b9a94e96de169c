// Package stream is the real-time side of Switchyard: the hub that keeps
// each environment's segment-expanded flags in memory, encoded once, and
// fans every committed change out to the stream connections of that
// environment on this instance.
//
// Changes reach the hub as notifications, through Apply, from the
// instance's change follower (server/follow), which merges the bus, the
// change log and this instance's own writes. The hub re-reads the committed
// flag and compares versions, so duplicate, late or reordered notifications
// are harmless (docs/reference/code-style.md, §6 Bus and hub: "notify, then
// read"). When messages may have been lost it resyncs: drops its caches and
// ends every stream, and clients reconnect and rebuild from the replay
// (docs/reference/stream.md, Resync).
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
	"github.com/switchyard/switchyard/server/metrics"
)

// Source is what the hub reads: committed, segment-expanded flags.
// *core.Service implements it.
type Source interface {
	SDKFlags(ctx context.Context, envID uuid.UUID) ([]eval.Flag, error)
	SDKFlag(ctx context.Context, envID uuid.UUID, key string) (eval.Flag, bool, error)
}

// Config tunes a Hub; its zero value works.
type Config struct {
	Logger    *slog.Logger
	Metrics   *metrics.Metrics // nil: none
	QueueSize int              // live updates a connection may have waiting; default 1024
	// CaughtUp, when set, is called before every read of the hub
	// (Subscribe, Snapshot, Evaluation) and returns once every change this
	// instance has acknowledged has reached the hub (follow.Follower.CaughtUp):
	// reads see their writes.
	CaughtUp func(context.Context) error
}

// ErrClosed is returned by Subscribe once the hub is shutting down.
var ErrClosed = errors.New("stream hub is closed")

// readTimeout bounds each read of the hub's Source.
const readTimeout = 30 * time.Second

// Hub fans changes out to the stream connections of this instance.
// Changes are applied one at a time, by the change follower (Apply), so
// fan-outs never overlap and every connection receives them in order.
//
// Locking (docs/reference/code-style.md, §16 Contexts and locks): h.mu guards
// the environment table, the set of every subscriber and closed; each
// envState's mu guards that environment's current view and its subscribers.
// Both are held only for map and pointer work: never across a read of the
// Source, an encoding or a fan-out, and never one inside the other. A change is
// read and encoded with no lock held, installed with a compare-and-swap of the
// environment's view, and fanned out to a copy of the subscribers taken in the
// same critical section as the install.
type Hub struct {
	src Source
	cfg Config

	mu     sync.Mutex
	envs   map[uuid.UUID]*envState
	subs   map[*Subscriber]struct{}
	closed bool

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

// New returns a hub reading from src. The change follower feeds it (Apply).
func New(src Source, cfg Config) *Hub {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.QueueSize <= 0 {
		// Enough for a segment edit that re-broadcasts hundreds of flags at
		// once; the queue grows only while a connection is behind.
		cfg.QueueSize = 1024
	}
	return &Hub{src: src, cfg: cfg, envs: map[uuid.UUID]*envState{}, subs: map[*Subscriber]struct{}{}}
}

// Close ends every stream; later subscriptions fail.
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
}

// Apply applies one committed change: a flag upserted or deleted is
// re-read and fanned out, a revoked credential ends its streams, a resync
// ends every stream. An error means the change could not be read: the hub
// can no longer prove its clients current, and the caller resyncs it.
func (h *Hub) Apply(ctx context.Context, e bus.Event) error {
	switch e.Op {
	case bus.OpResync:
		h.resync("the bus may have lost messages")
	case bus.OpRevoke:
		if ref, ok := auth.RevokedRef(e.Key); ok {
			h.revoke(ref)
		}
	case bus.OpUpsert, bus.OpDelete:
		return h.refresh(ctx, e)
	}
	return nil
}

// refresh re-reads one flag and sends what changed to the environment's
// connections. The read and the encoding happen with no lock held; the
// result is installed only if the environment's view is still the one it
// was computed from (a compare-and-swap, so the cache never moves
// backwards), and fanned out to the connections registered at that
// instant. A connection registered after the install has the change in its
// bootstrap; one registered before gets it on its queue: never both,
// never neither.
func (h *Hub) refresh(ctx context.Context, e bus.Event) error {
	start := time.Now()
	h.mu.Lock()
	st := h.envs[e.EnvID]
	h.mu.Unlock()
	if st == nil {
		return nil // nobody here holds this environment; it loads fresh when needed
	}
	// A first read in flight may predate this change: apply it after.
	select {
	case <-st.loaded:
	case <-ctx.Done():
		return ctx.Err()
	}
	if st.err != nil {
		return nil // the failed state is dropped; the next reader loads afresh
	}
	for attempt := 0; ; attempt++ {
		v0 := st.view.Load()
		cur, had := v0.flags[e.Key]
		switch {
		case e.Op == bus.OpUpsert && had && e.Version > 0 && cur.version >= e.Version:
			return nil // already applied (the write path, the bus and the change log all deliver it)
		case e.Op == bus.OpDelete && !had:
			return nil
		}
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		f, exists, err := h.src.SDKFlag(rctx, e.EnvID, e.Key)
		cancel()
		if err != nil {
			// The change is committed but unreadable now: clients cannot be
			// proven current, so they must rebuild.
			return fmt.Errorf("re-read changed flag: %w", err)
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
				return nil
			}
			if had && f.Version < cur.version {
				// Deleted and created again: clients keep the highest version,
				// so they must drop the old flag first.
				frames = append(frames, deleteFrame(e.EnvID, e.Key))
			}
			next = v0.with(e.Key, ent)
			frames = append(frames, ent.frame)
		default:
			return nil
		}
		st.mu.Lock()
		if st.dead {
			st.mu.Unlock()
			return nil // a resync ended every connection of this state
		}
		if st.view.Load() != v0 {
			// Someone installed a view since the read: ours may be older.
			st.mu.Unlock()
			if attempt < 3 {
				continue
			}
			return errors.New("flag changed under every re-read")
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
		return nil
	}
}

// resync drops every cache and ends every stream; clients reconnect and
// rebuild from the replay, read afresh.
func (h *Hub) resync(why string) {
	h.mu.Lock()
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
	if err := h.caughtUp(ctx); err != nil {
		return nil, nil, 0, err
	}
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

// caughtUp waits until the hub holds every change this instance has
// acknowledged (Config.CaughtUp).
func (h *Hub) caughtUp(ctx context.Context) error {
	if h.cfg.CaughtUp == nil {
		return nil
	}
	if err := h.cfg.CaughtUp(ctx); err != nil {
		return fmt.Errorf("wait for acknowledged changes: %w", err)
	}
	return nil
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
	if err := h.caughtUp(ctx); err != nil {
		return nil, err
	}
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
	if err := h.caughtUp(ctx); err != nil {
		return nil, "", err
	}
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
