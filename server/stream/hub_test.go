package stream

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/follow"
)

// fakeSource is an in-memory Source and change log: the committed state
// the hub re-reads.
type fakeSource struct {
	mu    sync.Mutex
	flags map[uuid.UUID]map[string]eval.Flag
	log   []follow.Change
}

func newFakeSource() *fakeSource { return &fakeSource{flags: map[uuid.UUID]map[string]eval.Flag{}} }

// commit stores a flag version, as a transaction would, and logs it.
func (f *fakeSource) commit(env uuid.UUID, key string, version int64) bus.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flags[env] == nil {
		f.flags[env] = map[string]eval.Flag{}
	}
	f.flags[env][key] = eval.Flag{Key: key, EnvironmentID: env.String(), IsEnabled: true, Version: version}
	e := bus.Event{Op: bus.OpUpsert, EnvID: env, Key: key, Version: version}
	f.log = append(f.log, follow.Change{Seq: int64(len(f.log) + 1), Event: e})
	return e
}

func (f *fakeSource) SDKFlags(_ context.Context, env uuid.UUID) ([]eval.Flag, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []eval.Flag
	for _, fl := range f.flags[env] {
		out = append(out, fl)
	}
	return out, nil
}

func (f *fakeSource) SDKFlag(_ context.Context, env uuid.UUID, key string) (eval.Flag, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.flags[env][key]
	return fl, ok, nil
}

func (f *fakeSource) Position(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strconv.Itoa(len(f.log)), nil
}

func (f *fakeSource) ChangesSince(_ context.Context, pos string) ([]follow.Change, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := strconv.Atoi(pos)
	if err != nil {
		return nil, pos, err
	}
	return append([]follow.Change(nil), f.log[min(n, len(f.log)):]...), strconv.Itoa(len(f.log)), nil
}

func (f *fakeSource) PruneChangeLog(context.Context) (int64, error) { return 0, nil }

// testHub is a hub fed by a change follower, as the app wires it: Notify
// is a notification from the bus.
type testHub struct {
	*Hub
	f *follow.Follower
}

func (h testHub) Notify(e bus.Event) { h.f.Notify(e) }

// startHub starts a hub on src behind a follower that polls src's change
// log every poll (never when zero) and applies each change to the caches
// given, then to the hub.
func startHub(t *testing.T, src interface {
	Source
	follow.Log
}, cfg Config, poll time.Duration, before ...follow.Cache) testHub {
	t.Helper()
	return startHubOf(t, New(src, cfg), src, poll, before...)
}

func startHubOf(t *testing.T, h *Hub, log follow.Log, poll time.Duration, before ...follow.Cache) testHub {
	t.Helper()
	if poll == 0 {
		poll = time.Hour
	}
	f := follow.New(log, nil, follow.Config{PollInterval: poll})
	if err := f.Start(context.Background(), append(before, h)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); h.Close() })
	return testHub{Hub: h, f: f}
}

// versionOf reads the flag version out of an UPSERT frame.
func versionOf(t *testing.T, frame []byte) int64 {
	t.Helper()
	data := strings.TrimPrefix(strings.SplitN(string(frame), "\n", 3)[1], "data: ")
	var u struct {
		Flag struct {
			Version int64 `json:"version"`
		} `json:"flag"`
	}
	if err := json.Unmarshal([]byte(data), &u); err != nil {
		t.Fatalf("frame %q: %v", frame, err)
	}
	return u.Flag.Version
}

// pending holds frames taken from a subscriber but not yet consumed.
var pending = map[*Subscriber][][]byte{}

func recv(t *testing.T, s *Subscriber) []byte {
	t.Helper()
	for len(pending[s]) == 0 {
		select {
		case <-s.Wake():
			pending[s] = append(pending[s], s.Take()...)
		case <-s.Done():
			t.Fatal("stream ended")
		case <-time.After(5 * time.Second):
			t.Fatal("no update")
		}
	}
	f := pending[s][0]
	pending[s] = pending[s][1:]
	return f
}

func TestBootstrapThenLive(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	src.commit(env, "b", 1)
	src.commit(env, "a", 3)
	h := startHub(t, src, Config{}, 0)
	s, boot, n, err := h.Subscribe(context.Background(), []uuid.UUID{env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || strings.Index(string(boot), `"key":"a"`) > strings.Index(string(boot), `"key":"b"`) {
		t.Fatalf("bootstrap of %d flags = %s, want a then b", n, boot)
	}
	h.Notify(src.commit(env, "a", 4))
	if v := versionOf(t, recv(t, s)); v != 4 {
		t.Errorf("live update version %d, want 4", v)
	}
	// A duplicate (the bus and the change log both deliver) sends nothing.
	h.Notify(bus.Event{Op: bus.OpUpsert, EnvID: env, Key: "a", Version: 4})
	h.Notify(src.commit(env, "b", 2))
	if v := versionOf(t, recv(t, s)); v != 2 {
		t.Errorf("after a duplicate the next update is version %d, want b@2", v)
	}
}

// A reader that falls behind is cut off; the others keep receiving.
func TestSlowReaderIsCutOff(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	h := startHub(t, src, Config{QueueSize: 4}, 0)
	slow, _, _, _ := h.Subscribe(context.Background(), []uuid.UUID{env}, nil)
	fast, _, _, _ := h.Subscribe(context.Background(), []uuid.UUID{env}, nil)
	for v := int64(1); v <= 10; v++ {
		h.Notify(src.commit(env, "k", v))
		if got := versionOf(t, recv(t, fast)); got != v {
			t.Fatalf("fast reader got version %d, want %d", got, v)
		}
	}
	select {
	case <-slow.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the slow reader was not cut off")
	}
}

func TestRevocationAndResyncEndStreams(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	h := startHub(t, src, Config{}, 0)
	keyed, _, _, _ := h.Subscribe(context.Background(), []uuid.UUID{env}, []string{"sdk_key:42"})
	legacy, _, _, _ := h.Subscribe(context.Background(), []uuid.UUID{env}, []string{"sdk_key:43"})
	user, _, _, _ := h.Subscribe(context.Background(), []uuid.UUID{env}, []string{"user:42", "token:9"})
	other, _, _, _ := h.Subscribe(context.Background(), []uuid.UUID{env}, []string{"sdk_key:7", "user:7"})
	h.Notify(bus.Event{Op: bus.OpRevoke, EnvID: env, Key: "sdk_key:42"})
	h.Notify(bus.Event{Op: bus.OpRevoke, EnvID: env, Key: "43"}) // as instances before migration 00007 publish it
	h.Notify(bus.Event{Op: bus.OpRevoke, Key: "token:9"})
	for name, s := range map[string]*Subscriber{"key 42": keyed, "key 43 (bare id)": legacy, "token 9": user} {
		select {
		case <-s.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("revoking %s did not end its stream", name)
		}
	}
	select {
	case <-other.Done():
		t.Fatal("revoking other credentials ended this stream")
	default:
	}
	h.Notify(bus.Event{Op: bus.OpResync})
	select {
	case <-other.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a resync did not end the stream")
	}
}

// A flag deleted and created again goes back to version 1; clients keep the
// highest version, so they get a DELETE first. Here the delete's
// notification arrives after the new flag has committed.
func TestRecreatedFlagIsDeletedFirst(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	src.commit(env, "k", 5)
	h := startHub(t, src, Config{}, 0)
	s, _, _, _ := h.Subscribe(context.Background(), []uuid.UUID{env}, nil)
	src.commit(env, "k", 1) // deleted and created again, both committed
	h.Notify(bus.Event{Op: bus.OpDelete, EnvID: env, Key: "k"})
	if f := recv(t, s); !strings.Contains(string(f), `"type":"DELETE"`) {
		t.Fatalf("first frame %q, want a DELETE", f)
	}
	if v := versionOf(t, recv(t, s)); v != 1 {
		t.Errorf("then version %d, want 1", v)
	}
}

func TestSnapshotIsMemoisedUntilAChange(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	src.commit(env, "k", 1)
	h := startHub(t, src, Config{}, 0)
	a, _ := h.Snapshot(context.Background(), env)
	b, _ := h.Snapshot(context.Background(), env)
	if a != b {
		t.Error("two snapshots without a change were encoded twice")
	}
	h.Notify(src.commit(env, "k", 2))
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, _ := h.Snapshot(context.Background(), env)
		if c.ETag != a.ETag {
			if !strings.Contains(string(c.Body), `"version":2`) {
				t.Errorf("new snapshot %s lacks version 2", c.Body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the snapshot did not change")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Remote evaluation reads the same cache: compiled once per version, tagged
// with the snapshot's ETag, and current after a change.
func TestEvaluationFollowsTheCache(t *testing.T) {
	src := newFakeSource()
	env := uuid.New()
	src.commit(env, "k", 1)
	h := startHub(t, src, Config{}, 0)
	a, tagA, err := h.Evaluation(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	b, tagB, _ := h.Evaluation(context.Background(), env)
	snap, _ := h.Snapshot(context.Background(), env)
	if a != b || tagA != tagB || tagA != snap.ETag {
		t.Error("two evaluations without a change compiled twice, or their tag is not the snapshot's")
	}
	if info, ok := a.Info("k"); !ok || info.Version != 1 || a.Evaluate("k", "u", nil).Value != true {
		t.Errorf("compiled flag k = %+v %v", info, ok)
	}
	h.Notify(src.commit(env, "k", 2))
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, tag, _ := h.Evaluation(context.Background(), env)
		if info, _ := c.Info("k"); info.Version == 2 {
			if tag == tagA {
				t.Error("the tag did not change with the flag")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the evaluation did not follow the change")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
