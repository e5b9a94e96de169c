package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// sseEvent is one Server-Sent Event, or a comment when Name is ":".
type sseEvent struct {
	Name string
	Data string
}

// sseClient reads a /stream connection event by event.
type sseClient struct {
	resp   *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

func openStream(t *testing.T, s *apptest.Server, query string, header map[string]string) *sseClient {
	t.Helper()
	return openStreamAt(t, s, "/stream", query, header)
}

// openStreamAt opens any Server-Sent Events route; unnamed events arrive as
// "message", as EventSource names them.
func openStreamAt(t *testing.T, s *apptest.Server, path, query string, header map[string]string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+path+query, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &sseClient{resp: resp, events: make(chan sseEvent, 1024), cancel: cancel}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	if resp.StatusCode != 200 {
		return c
	}
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name == "" && ev.Data != "" {
					ev.Name = "message"
				}
				if ev.Name != "" {
					c.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				c.events <- sseEvent{Name: ":", Data: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event: "):
				ev.Name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.Data = line[len("data: "):]
			}
		}
	}()
	return c
}

// next returns the next event that is not a keep-alive, or fails.
func (c *sseClient) next(t *testing.T) sseEvent {
	t.Helper()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if ev.Name != ":" {
				return ev
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10 s")
		}
	}
}

// ended waits for the server to end the stream.
func (c *sseClient) ended(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream did not end")
		}
	}
}

func sseData(t *testing.T, data string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("event data %q: %v", data, err)
	}
	return v
}

func TestStreamSequenceAndUpdates(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	prod, staging := fe.envs["production"], fe.envs["staging"]
	fe.call(t, "POST", "/api/environments/"+prod+"/segments", map[string]any{"key": "beta", "name": "Beta",
		"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"pro"}}}})
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "b", "is_enabled": true, "rules": []any{map[string]any{"segment_key": "beta"}}})
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "a", "is_enabled": false})
	key := fe.s.SDKKey(t, uuid.MustParse(prod))

	c := openStream(t, fe.s, "", map[string]string{"Authorization": "Bearer " + key})
	for h, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := c.resp.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if ev := c.next(t); ev.Name != "connected" || ev.Data != `{"environment_id":"`+prod+`"}` {
		t.Fatalf("first event = %+v, want connected with the environment", ev)
	}
	for _, want := range []string{"a", "b"} {
		ev := c.next(t)
		u := sseData(t, ev.Data)
		if ev.Name != "update" || u["type"] != "UPSERT" || u["env_id"] != prod || field(u, "flag", "key") != want {
			t.Fatalf("bootstrap event = %+v, want an UPSERT of %s", ev, want)
		}
		if want == "b" {
			rules := field(u, "flag", "rules").([]any)
			if len(rules) != 1 || field(rules[0], "attribute") != "plan" || field(rules[0], "segment_key") != nil {
				t.Errorf("b's rules = %v, want the segment expanded", rules)
			}
		}
	}
	if ev := c.next(t); ev.Name != "ready" || ev.Data != `"2"` {
		t.Fatalf("after the bootstrap = %+v, want ready \"2\"", ev)
	}

	fe.call(t, "PATCH", fe.flags("staging")+"/nothing", map[string]any{"is_enabled": true}) // 404, and another environment anyway
	fe.call(t, "POST", fe.flags("staging"), map[string]any{"key": "elsewhere", "is_enabled": true})
	fe.call(t, "PATCH", fe.flags("production")+"/a", map[string]any{"is_enabled": true})
	u := sseData(t, c.next(t).Data)
	if u["type"] != "UPSERT" || field(u, "flag", "key") != "a" || field(u, "flag", "version") != float64(2) {
		t.Fatalf("after a patch = %v, want a@2 (and nothing from staging %s)", u, staging)
	}
	// A segment edit re-broadcasts the flags that use it.
	fe.call(t, "PATCH", "/api/environments/"+prod+"/segments/beta", map[string]any{"rules": []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"team"}}}})
	u = sseData(t, c.next(t).Data)
	if field(u, "flag", "key") != "b" || !strings.Contains(fmt.Sprint(field(u, "flag", "rules")), "team") {
		t.Fatalf("after a segment edit = %v, want b with the new rules", u)
	}
	fe.call(t, "DELETE", fe.flags("production")+"/a", nil)
	if ev := c.next(t); ev.Data != `{"env_id":"`+prod+`","key":"a","type":"DELETE"}` {
		t.Fatalf("after a delete = %+v", ev)
	}
}

func TestUserStreamsAndKeepAlive(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil, app.WithStreamTiming(50*time.Millisecond, 50*time.Millisecond))
	_, token := s.User(t, "ada@example.com", "admin")
	_, envs := s.DefaultProject(t)
	// A token stream carries every readable environment; connected names none.
	c := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + token})
	if ev := c.next(t); ev.Data != `{"environment_id":null}` {
		t.Fatalf("connected = %+v, want a null environment", ev)
	}
	if ev := c.next(t); ev.Name != "ready" || ev.Data != `"0"` {
		t.Fatalf("then %+v, want ready \"0\"", ev)
	}
	s.Do(t, apptest.Request{Method: "POST", Path: "/api/environments/" + envs["staging"].String() + "/flags", Bearer: token, Body: map[string]any{"key": "x", "is_enabled": true}})
	if u := sseData(t, c.next(t).Data); u["env_id"] != envs["staging"].String() {
		t.Fatalf("update %v, want one naming staging", u)
	}
	for {
		select {
		case ev := <-c.events:
			if ev.Name == ":" && ev.Data == "keep-alive" {
				goto narrowed
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no keep-alive")
		}
	}
narrowed:
	// environment_id narrows it; one the caller cannot see is 404.
	n := openStream(t, s, "?environment_id="+envs["production"].String(), map[string]string{"Authorization": "Bearer " + token})
	n.next(t)
	if ev := n.next(t); ev.Data != `"0"` {
		t.Errorf("narrowed to production: %+v, want ready \"0\"", ev)
	}
	if bad := openStream(t, s, "?environment_id="+uuid.NewString(), map[string]string{"Authorization": "Bearer " + token}); bad.resp.StatusCode != 404 {
		t.Errorf("an unknown environment = %d, want 404", bad.resp.StatusCode)
	}
	if none := openStream(t, s, "", nil); none.resp.StatusCode != 401 {
		t.Errorf("no credentials = %d, want 401", none.resp.StatusCode)
	}
	// The query credential is for EventSource clients.
	key := s.SDKKey(t, envs["production"])
	if q := openStream(t, s, "?sdk_key="+key, nil); q.resp.StatusCode != 200 || q.next(t).Name != "connected" {
		t.Errorf("sdk_key query = %d, want a stream", q.resp.StatusCode)
	}
}

func TestRevokingAKeyEndsItsStream(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	key := fe.s.SDKKey(t, uuid.MustParse(fe.envs["production"]))
	c := openStream(t, fe.s, "", map[string]string{"Authorization": "Bearer " + key})
	c.next(t)
	var id int64
	if err := fe.s.DB(t).QueryRow(t.Context(), `SELECT id FROM sdk_keys WHERE prefix = $1`, key[:12]).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if status, body := fe.call(t, "DELETE", fmt.Sprintf("/api/projects/%s/keys/%d", fe.project, id), nil); status != 204 {
		t.Fatalf("revoke = %d %v", status, body)
	}
	c.ended(t)
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	prod := fe.envs["production"]
	key := fe.s.SDKKey(t, uuid.MustParse(prod))
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "k", "is_enabled": true})
	status, body, resp := fe.s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key})
	etag := resp.Header.Get("ETag")
	if status != 200 || !strings.Contains(string(body), `"key":"k"`) || etag == "" || resp.Header.Get("X-Service-Environment-Id") != prod ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "X-Service-Environment-Id") {
		t.Fatalf("snapshot = %d %s %v", status, body, resp.Header)
	}
	if status, _, _ := fe.s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key, Header: map[string]string{"If-None-Match": etag}}); status != 304 {
		t.Errorf("If-None-Match the current tag = %d, want 304", status)
	}
	fe.call(t, "PATCH", fe.flags("production")+"/k", map[string]any{"is_enabled": false})
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, resp := fe.s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key, Header: map[string]string{"If-None-Match": etag}})
		if status == 200 && resp.Header.Get("ETag") != etag {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a change the snapshot still answers %d with tag %s", status, etag)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := fe.s
	s.User(t, "web@example.com", "viewer")
	r := login(t, s, "web@example.com", "password123")
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Cookie: r.cookie}); status != 400 {
		t.Errorf("snapshot with a session cookie = %d, want 400", status)
	}
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot"}); status != 401 {
		t.Errorf("snapshot without credentials = %d, want 401", status)
	}
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: "sk_live_nope"}); status != 401 {
		t.Errorf("snapshot with an unknown key = %d, want 401", status)
	}
}

// A client connecting during a burst of writes ends up on the final version.
func TestConnectDuringBurstConverges(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	key := fe.s.SDKKey(t, uuid.MustParse(fe.envs["production"]))
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "hot", "is_enabled": true, "rollout_percentage": 0})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 40; i++ {
			fe.call(t, "PATCH", fe.flags("production")+"/hot", map[string]any{"rollout_percentage": i})
		}
	}()
	var clients []*sseClient
	for i := 0; i < 4; i++ {
		clients = append(clients, openStream(t, fe.s, "", map[string]string{"Authorization": "Bearer " + key}))
		time.Sleep(5 * time.Millisecond)
	}
	<-done
	for i, c := range clients {
		highest := float64(0)
		deadline := time.After(10 * time.Second)
		for highest < 41 {
			select {
			case ev := <-c.events:
				if ev.Name == "update" {
					if v, _ := field(sseData(t, ev.Data), "flag", "version").(float64); v > highest {
						highest = v
					}
				}
			case <-deadline:
				t.Fatalf("client %d stopped at version %v, want 41", i, highest)
			}
		}
	}
}

// redisOn starts a private redis-server on a free port, so the test can
// take it down.
func redisOn(t *testing.T) (url string, stop, restart func()) {
	t.Helper()
	testenv.RedisURL(t)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var cmd *exec.Cmd
	start := func() {
		cmd = exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
				c.Close()
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("redis-server did not start")
			}
		}
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	start()
	t.Cleanup(stop)
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port), stop, start
}

// Two instances, one database, real Redis: a write on A reaches a client of
// B; revoking a key ends its streams on both; a write while Redis is down
// still reaches clients (the change log), and when Redis returns every
// stream is ended so clients rebuild.
func TestTwoInstancesOverRedis(t *testing.T) {
	t.Parallel()
	url, stopRedis, startRedis := redisOn(t)
	channel := "switchyard-test:" + uuid.NewString()
	opts := []app.Option{app.WithBusChannel(channel), app.WithStreamTiming(time.Second, 200*time.Millisecond)}
	a := apptest.Start(t, map[string]string{"REDIS_URL": url}, opts...)
	b := apptest.Start(t, map[string]string{"REDIS_URL": url, "DATABASE_URL": a.DBURL}, opts...)
	_, token := a.User(t, "ada@example.com", "admin")
	project, envs := a.DefaultProject(t)
	prod := envs["production"].String()
	key := a.SDKKey(t, envs["production"])
	write := func(body map[string]any) {
		t.Helper()
		if status, raw, _ := a.Do(t, apptest.Request{Method: "POST", Path: "/api/environments/" + prod + "/flags", Bearer: token, Body: body}); status != 200 {
			t.Fatalf("write on A = %d %s", status, raw)
		}
	}
	onB := openStream(t, b, "", map[string]string{"Authorization": "Bearer " + key})
	onA := openStream(t, a, "", map[string]string{"Authorization": "Bearer " + key})
	for _, c := range []*sseClient{onA, onB} {
		c.next(t)
		c.next(t) // connected, ready
	}
	start := time.Now()
	write(map[string]any{"key": "f", "is_enabled": true})
	if u := sseData(t, onB.next(t).Data); field(u, "flag", "key") != "f" {
		t.Fatalf("B received %v", u)
	}
	t.Logf("write on A reached a client of B in %v", time.Since(start))
	onA.next(t)

	stopRedis()
	write(map[string]any{"key": "during-outage", "is_enabled": true})
	if u := sseData(t, onB.next(t).Data); field(u, "flag", "key") != "during-outage" {
		t.Fatalf("during the outage B received %v", u)
	}
	startRedis()
	onB.ended(t) // Redis is back: B cannot prove it missed nothing, so it resyncs
	again := openStream(t, b, "", map[string]string{"Authorization": "Bearer " + key})
	again.next(t)
	if ev := again.next(t); ev.Name != "update" {
		t.Fatalf("after the resync the replay starts with %+v", ev)
	}

	// Revocation ends the key's streams on both instances.
	onA2 := openStream(t, a, "", map[string]string{"Authorization": "Bearer " + key})
	onA2.next(t)
	var id int64
	if err := a.DB(t).QueryRow(t.Context(), `SELECT id FROM sdk_keys WHERE prefix = $1`, key[:12]).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := a.Do(t, apptest.Request{Method: "DELETE", Path: fmt.Sprintf("/api/projects/%s/keys/%d", project, id), Bearer: token}); status != 204 {
		t.Fatalf("revoke = %d", status)
	}
	onA2.ended(t)
	again.ended(t)
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	s.Do(t, apptest.Request{Method: "GET", Path: "/health"})
	resp, body := get(t, s.URL+"/metrics")
	for _, want := range []string{"switchyard_http_request_duration_seconds", "switchyard_broadcast_fanout_seconds", "switchyard_bus_resubscribes_total", "go_goroutines"} {
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("/metrics = %d, lacks %s", resp.StatusCode, want)
		}
	}
}
