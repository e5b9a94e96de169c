package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/agree"
	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// agreeing is a deployment of several instances over one database and one
// Redis channel, arranged for the tests of "every instance agrees".
type agreeing struct {
	insts []*apptest.Server
	token string
	proj  uuid.UUID
	env   uuid.UUID
	key   string // an SDK key of env
}

func startAgreeing(t *testing.T, n int, redisURLs []string, opts ...app.Option) *agreeing {
	t.Helper()
	channel := "switchyard-test:" + uuid.NewString()
	opts = append([]app.Option{app.WithBusChannel(channel)}, opts...)
	a := &agreeing{}
	for i := range n {
		env := map[string]string{"REDIS_URL": redisURLs[i%len(redisURLs)]}
		if i > 0 {
			env["DATABASE_URL"] = a.insts[0].DBURL
		}
		a.insts = append(a.insts, apptest.Start(t, env, opts...))
	}
	s := a.insts[0]
	_, a.token = s.User(t, "ada@example.com", "admin")
	var envs map[string]uuid.UUID
	a.proj, envs = s.DefaultProject(t)
	a.env = envs["production"]
	a.key = s.SDKKey(t, a.env)
	return a
}

func (a *agreeing) flags() string { return "/api/environments/" + a.env.String() + "/flags" }

// write sends a write and returns its answer, failing unless it is want.
func (a *agreeing) write(t *testing.T, s *apptest.Server, method, path string, body any, want int) []byte {
	t.Helper()
	status, raw, _ := s.Do(t, apptest.Request{Method: method, Path: path, Bearer: a.token, Body: body})
	if status != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, status, raw, want)
	}
	return raw
}

// patchHot sets the flag hot's rollout and returns its new version.
func (a *agreeing) patchHot(t *testing.T, s *apptest.Server, rollout int) int64 {
	t.Helper()
	var f struct {
		Version int64 `json:"version"`
	}
	raw := a.write(t, s, "PATCH", a.flags()+"/hot", map[string]any{"rollout_percentage": rollout}, 200)
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Version
}

// snapshotVersion is hot's version in s's snapshot (0: absent).
func snapshotVersion(t *testing.T, s *apptest.Server, key string) int64 {
	t.Helper()
	status, raw, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key})
	var all []struct {
		Key     string `json:"key"`
		Version int64  `json:"version"`
	}
	if status != 200 || json.Unmarshal(raw, &all) != nil {
		t.Fatalf("snapshot = %d %s", status, raw)
	}
	for _, f := range all {
		if f.Key == "hot" {
			return f.Version
		}
	}
	return 0
}

// ofrepVersion is hot's version in an OFREP evaluation on s.
func ofrepVersion(t *testing.T, s *apptest.Server, key string) int64 {
	t.Helper()
	status, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags/hot", Bearer: key,
		Body: map[string]any{"context": map[string]any{"targetingKey": "u-1"}}})
	var r struct {
		Metadata struct {
			Version int64 `json:"version"`
		} `json:"metadata"`
	}
	if status != 200 || json.Unmarshal(raw, &r) != nil {
		t.Fatalf("evaluation = %d %s", status, raw)
	}
	return r.Metadata.Version
}

// bulkETag is the ETag of a bulk OFREP evaluation on s.
func bulkETag(t *testing.T, s *apptest.Server, key, ifNoneMatch string) (int, string) {
	t.Helper()
	req := apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags", Bearer: key,
		Body: map[string]any{"context": map[string]any{"targetingKey": "u-1"}}}
	if ifNoneMatch != "" {
		req.Header = map[string]string{"If-None-Match": ifNoneMatch}
	}
	status, _, resp := s.Do(t, req)
	return status, resp.Header.Get("ETag")
}

// bootstrapVersion is hot's version in the bootstrap of a new stream on s.
func bootstrapVersion(t *testing.T, s *apptest.Server, key string) int64 {
	t.Helper()
	c := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + key})
	defer c.cancel()
	var v int64
	for {
		ev := c.next(t)
		switch ev.Name {
		case "ready":
			return v
		case "update":
			if u := sseData(t, ev.Data); field(u, "flag", "key") == "hot" {
				v = int64(field(u, "flag", "version").(float64))
			}
		}
	}
}

// TestEveryInstanceAgrees writes on one instance and reads at once on every
// other: each read that starts after a write's answer includes it, and the
// next request with a revoked key is refused, with two and three instances.
func TestEveryInstanceAgrees(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d instances", n), func(t *testing.T) {
			t.Parallel()
			a := startAgreeing(t, n, []string{testenv.RedisURL(t)})
			a.write(t, a.insts[0], "POST", a.flags(), map[string]any{"key": "hot", "is_enabled": true, "rollout_percentage": 0}, 200)
			misses := map[string]int{}
			tries := 0
			for i := range 120 {
				w := a.insts[i%n]
				etags := map[int]string{}
				for j, r := range a.insts {
					_, etags[j] = bulkETag(t, r, a.key, "")
				}
				version := a.patchHot(t, w, i%101)
				for j, r := range a.insts {
					if r == w {
						continue
					}
					tries++
					if got := snapshotVersion(t, r, a.key); got < version {
						misses["snapshot"]++
					}
					if got := ofrepVersion(t, r, a.key); got < version {
						misses["ofrep single"]++
					}
					if status, _ := bulkETag(t, r, a.key, etags[j]); status == http.StatusNotModified {
						misses["ofrep bulk with the old ETag"]++
					}
					if i%4 == 0 {
						if got := bootstrapVersion(t, r, a.key); got < version {
							misses["stream bootstrap"]++
						}
					}
				}
			}
			// Segment writes re-send the flags that use the segment.
			segs := "/api/environments/" + a.env.String() + "/segments"
			cond := func(v string) []any {
				return []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{v}}}
			}
			a.write(t, a.insts[0], "POST", segs, map[string]any{"key": "beta", "name": "Beta", "rules": cond("v-start")}, 200)
			a.write(t, a.insts[0], "POST", a.flags(), map[string]any{"key": "seg", "is_enabled": true, "rules": []any{map[string]any{"segment_key": "beta"}}}, 200)
			for i := range 40 {
				w := a.insts[i%n]
				value := fmt.Sprintf("v-%d-%d", n, i)
				a.write(t, w, "PATCH", segs+"/beta", map[string]any{"rules": cond(value)}, 200)
				for _, r := range a.insts {
					if r == w {
						continue
					}
					tries++
					if _, raw, _ := r.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: a.key}); !strings.Contains(string(raw), value) {
						misses["segment write"]++
					}
				}
			}
			// Revocations: a key used (and cached) on every instance, then
			// deleted on one; the next request anywhere is refused.
			for i := range 30 {
				w := a.insts[i%n]
				key, id := a.newKey(t, w)
				for _, r := range a.insts {
					if got := snapshotVersion(t, r, key); got == 0 {
						t.Fatalf("the new key does not read hot")
					}
				}
				a.write(t, w, "DELETE", fmt.Sprintf("/api/projects/%s/keys/%d", a.proj, id), nil, 204)
				for _, r := range a.insts {
					if r == w {
						continue
					}
					if status, _, _ := r.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key}); status != http.StatusUnauthorized {
						misses["revoked key"]++
					}
				}
			}
			// An environment deleted on one instance: its key is refused on
			// the others at once.
			for i := range 10 {
				w := a.insts[i%n]
				raw := a.write(t, w, "POST", "/api/projects/"+a.proj.String()+"/environments", map[string]any{"name": fmt.Sprintf("Temp %d", i), "slug": fmt.Sprintf("temp-%d", i)}, 200)
				var e struct {
					ID uuid.UUID `json:"id"`
				}
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatal(err)
				}
				key := w.SDKKey(t, e.ID)
				for _, r := range a.insts {
					if status, _, _ := r.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key}); status != 200 {
						t.Fatalf("the key of a new environment = %d", status)
					}
				}
				a.write(t, w, "DELETE", "/api/projects/"+a.proj.String()+"/environments/"+e.ID.String(), nil, 204)
				for _, r := range a.insts {
					if r == w {
						continue
					}
					if status, _, _ := r.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key}); status != http.StatusUnauthorized {
						misses["deleted environment's key"]++
					}
				}
			}
			t.Logf("%d instances: %d reads after a write on another instance, misses %v", n, tries, misses)
			if len(misses) > 0 {
				t.Errorf("reads that missed an acknowledged write: %v", misses)
			}
		})
	}
}

// newKey creates an SDK key of a's environment through s.
func (a *agreeing) newKey(t *testing.T, s *apptest.Server) (string, int64) {
	t.Helper()
	raw := a.write(t, s, "POST", "/api/projects/"+a.proj.String()+"/keys", map[string]any{"environment_id": a.env, "name": "temp"}, 200)
	var k struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	if err := json.Unmarshal(raw, &k); err != nil || k.Key == "" {
		t.Fatalf("new key %s: %v", raw, err)
	}
	return k.Key, k.ID
}

// readsAgree writes on w and checks every other instance's next snapshot
// and evaluation, returning the write's duration.
func (a *agreeing) readsAgree(t *testing.T, w *apptest.Server, rollout int, misses map[string]int) time.Duration {
	t.Helper()
	start := time.Now()
	version := a.patchHot(t, w, rollout)
	took := time.Since(start)
	for _, r := range a.insts {
		if r == w {
			continue
		}
		if got := snapshotVersion(t, r, a.key); got < version {
			misses["snapshot"]++
		}
		if got := ofrepVersion(t, r, a.key); got < version {
			misses["ofrep single"]++
		}
	}
	return took
}

// While Redis is down no instance serves a state older than an acknowledged
// write, and writes complete within the change-log lease (plus scheduling).
func TestInstancesAgreeWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	url, stopRedis, startRedis := redisOn(t)
	const lease, pollLease = 300 * time.Millisecond, 700 * time.Millisecond
	a := startAgreeing(t, 2, []string{url}, app.WithLeases(lease, pollLease), app.WithStreamTiming(time.Second, 200*time.Millisecond))
	a.write(t, a.insts[0], "POST", a.flags(), map[string]any{"key": "hot", "is_enabled": true}, 200)
	misses := map[string]int{}
	for i := range 20 {
		a.readsAgree(t, a.insts[i%2], i, misses)
	}
	stopRedis()
	var slowest time.Duration
	for i := range 30 {
		slowest = max(slowest, a.readsAgree(t, a.insts[i%2], 50+i, misses))
	}
	startRedis()
	for i := range 20 {
		a.readsAgree(t, a.insts[i%2], i, misses)
	}
	t.Logf("slowest write while Redis was down: %v", slowest)
	if len(misses) > 0 {
		t.Errorf("stale reads: %v", misses)
	}
	if slowest > pollLease+time.Second {
		t.Errorf("a write took %v with Redis down; want at most the change-log lease (%v) plus 1 s", slowest, pollLease)
	}
}

// proxy is a TCP proxy to a Redis server that can be cut: the instance
// behind it is then partitioned from Redis while the others are not.
type proxy struct {
	l     net.Listener
	to    string
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func newProxy(t *testing.T, to string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, to: to}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.cut {
				p.mu.Unlock()
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", to)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(func() { l.Close(); p.setCut(true) })
	return p
}

func (p *proxy) url() string { return "redis://" + p.l.Addr().String() + "/0" }

// setCut cuts every connection through the proxy and refuses new ones, or
// lets them through again.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// An instance cut off from Redis answers nothing stale, writes on either
// side still complete within their bound, and the others see the
// partitioned instance's writes at once.
func TestPartitionedInstanceAnswersNothingStale(t *testing.T) {
	t.Parallel()
	url := testenv.RedisURL(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0")
	if i := strings.LastIndex(addr, "/"); i >= 0 {
		addr = addr[:i]
	}
	p := newProxy(t, addr)
	const lease, pollLease = 300 * time.Millisecond, 700 * time.Millisecond
	a := startAgreeing(t, 2, []string{url, p.url()}, app.WithLeases(lease, pollLease), app.WithStreamTiming(time.Second, 200*time.Millisecond))
	a.write(t, a.insts[0], "POST", a.flags(), map[string]any{"key": "hot", "is_enabled": true}, 200)
	misses := map[string]int{}
	for i := range 20 {
		a.readsAgree(t, a.insts[i%2], i, misses)
	}
	p.setCut(true)
	var slowest time.Duration
	for i := range 40 {
		slowest = max(slowest, a.readsAgree(t, a.insts[i%2], 30+i, misses))
	}
	p.setCut(false)
	t.Logf("slowest write during the partition: %v", slowest)
	if len(misses) > 0 {
		t.Errorf("stale reads: %v", misses)
	}
	if slowest > pollLease+time.Second {
		t.Errorf("a write took %v during the partition; want at most %v plus 1 s", slowest, pollLease)
	}
}

// An instance killed with kill -9 (no farewell) during a burst of writes
// holds up at most the writes in flight, each by at most the bus lease;
// the writes after them wait for it no more.
func TestKilledInstanceDelaysWritesAtMostTheLease(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	url := testenv.RedisURL(t)
	channel := "switchyard-test:" + uuid.NewString()
	a := &agreeing{insts: []*apptest.Server{apptest.Start(t, map[string]string{"REDIS_URL": url}, app.WithBusChannel(channel))}}
	s := a.insts[0]
	_, a.token = s.User(t, "ada@example.com", "admin")
	var envs map[string]uuid.UUID
	a.proj, envs = s.DefaultProject(t)
	a.env = envs["production"]
	victim := startProcess(t, bin, s.DBURL, "REDIS_URL="+url, "REDIS_CHANNEL="+channel)
	a.write(t, s, "POST", a.flags(), map[string]any{"key": "hot", "is_enabled": true}, 200)
	// The victim is heard (its heartbeats) and confirms writes: a write
	// waits for it, which the timings below show.
	var before, slowest, after time.Duration
	for i := range 50 {
		start := time.Now()
		a.patchHot(t, s, i)
		before = max(before, time.Since(start))
	}
	killed := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		victim.kill(t)
		close(killed)
	}()
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		start := time.Now()
		a.patchHot(t, s, i%101)
		slowest = max(slowest, time.Since(start))
	}
	<-killed
	for i := range 50 {
		start := time.Now()
		a.patchHot(t, s, i)
		after = max(after, time.Since(start))
	}
	t.Logf("slowest write: before the kill %v, around it %v, after it %v", before, slowest, after)
	if slowest > agreeLease+500*time.Millisecond {
		t.Errorf("a write took %v around the kill; want at most the lease (%v) and scheduling", slowest, agreeLease)
	}
	if after > 500*time.Millisecond {
		t.Errorf("a write after the kill took %v: writes still wait for the killed instance", after)
	}
}

// agreeLease is the bus lease the server runs with.
const agreeLease = agree.DefaultLease

// An instance that starts while another is writing answers nothing stale
// from its first request on, and a graceful stop holds no write up.
func TestStartingAndStoppingInstancesAgree(t *testing.T) {
	t.Parallel()
	url := testenv.RedisURL(t)
	channel := "switchyard-test:" + uuid.NewString()
	a := startAgreeing(t, 1, []string{url}, app.WithBusChannel(channel))
	w := a.insts[0]
	a.write(t, w, "POST", a.flags(), map[string]any{"key": "hot", "is_enabled": true}, 200)
	stop := make(chan struct{})
	writes := make(chan time.Duration, 10000)
	go func() {
		defer close(writes)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			status, _, _ := w.Do(t, apptest.Request{Method: "PATCH", Path: a.flags() + "/hot", Bearer: a.token, Body: map[string]any{"rollout_percentage": i % 101}})
			if status != 200 {
				t.Errorf("write during the start = %d", status)
				return
			}
			writes <- time.Since(start)
		}
	}()
	misses := map[string]int{}
	for range 3 {
		b := apptest.Start(t, map[string]string{"REDIS_URL": url, "DATABASE_URL": w.DBURL}, app.WithBusChannel(channel))
		a.insts = append(a.insts, b)
		for i := range 30 {
			a.readsAgree(t, w, i, misses)
		}
		b.Stop()
		a.insts = a.insts[:1]
	}
	close(stop)
	var slowest time.Duration
	for d := range writes {
		slowest = max(slowest, d)
	}
	t.Logf("slowest write while instances started and stopped: %v", slowest)
	if len(misses) > 0 {
		t.Errorf("stale reads on a starting instance: %v", misses)
	}
	if slowest > agreeLease+500*time.Millisecond {
		t.Errorf("a write took %v while instances started and stopped; want at most the lease %v", slowest, agreeLease)
	}
}
