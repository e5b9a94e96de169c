package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// twoInstances starts two instances on one database over a Redis of their
// own. The change-log poll and the keep-alive are an hour, so whatever ends
// on B within the test's limits arrived through the route every ended
// credential takes (identity's txV and the bus), not through the safety nets.
func twoInstances(t *testing.T) (a, b *apptest.Server) {
	t.Helper()
	url, _, _ := redisOn(t)
	opts := []app.Option{app.WithBusChannel("creds-" + uuid.NewString()), app.WithStreamTiming(time.Hour, time.Hour)}
	a = apptest.Start(t, map[string]string{"REDIS_URL": url}, opts...)
	b = apptest.Start(t, map[string]string{"REDIS_URL": url, "DATABASE_URL": a.DBURL}, opts...)
	return a, b
}

// sdkKeyUses are the four ways an SDK key is used: the snapshot, the stream
// with the key in the header and in the query, and the API. Each answers the
// status it got.
func sdkKeyUses(t *testing.T, s *apptest.Server, key string, env uuid.UUID) map[string]int {
	t.Helper()
	snapshot, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key})
	api, _ := call(t, s, key, "GET", "/api/environments/"+env.String()+"/flags", nil)
	header := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + key})
	header.cancel()
	query := openStream(t, s, "?sdk_key="+key, nil)
	query.cancel()
	return map[string]int{"snapshot": snapshot, "api": api, "stream (header)": header.resp.StatusCode, "stream (query)": query.resp.StatusCode}
}

// refusedWithin fails the test unless every use of key answers 401 within
// limit (0: at once).
func refusedWithin(t *testing.T, s *apptest.Server, name, key string, env uuid.UUID, limit time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		uses := sdkKeyUses(t, s, key, env)
		refused := true
		for _, status := range uses {
			refused = refused && status == http.StatusUnauthorized
		}
		if refused {
			t.Logf("instance %s refuses the key everywhere after %v", name, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) >= limit {
			t.Fatalf("instance %s, %v after the key ended: %v, want 401 for each", name, time.Since(start).Round(time.Millisecond), uses)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Every path that ends an SDK key ends it through one route: the instance
// that commits it refuses the key before it answers, every other instance
// within milliseconds, and open streams of the key end everywhere.
func TestEndedSDKKeysStopEverywhere(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t)
	_, admin := a.User(t, "admin@example.com", "admin")
	type ended struct {
		key string
		env uuid.UUID
		end func() int // ends the key on A; answers the status
	}
	paths := []struct {
		name    string
		arrange func(t *testing.T) ended
	}{
		{"revocation", func(t *testing.T) ended {
			p := newProject(t, a, admin)
			env := p.envBySlug(t, "staging")
			k := newKey(t, a, admin, p.ID, env)
			return ended{k.Key, env, func() int {
				return send(t, a, admin, "DELETE", "/api/projects/"+p.ID.String()+"/keys/"+itoa(k.ID), nil)
			}}
		}},
		{"environment deletion", func(t *testing.T) ended {
			p := newProject(t, a, admin)
			env := newEnv(t, a, admin, p.ID)
			k := newKey(t, a, admin, p.ID, env.ID)
			return ended{k.Key, env.ID, func() int {
				return send(t, a, admin, "DELETE", "/api/projects/"+p.ID.String()+"/environments/"+env.ID.String(), nil)
			}}
		}},
		{"project deletion", func(t *testing.T) ended {
			p := newProject(t, a, admin)
			env := p.envBySlug(t, "staging")
			k := newKey(t, a, admin, p.ID, env)
			return ended{k.Key, env, func() int { return send(t, a, admin, "DELETE", "/api/projects/"+p.ID.String(), nil) }}
		}},
	}
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			e := path.arrange(t)
			var streams []*sseClient
			for name, s := range map[string]*apptest.Server{"A": a, "B": b} {
				// Used on both instances just before: cached there.
				for use, status := range sdkKeyUses(t, s, e.key, e.env) {
					if status != http.StatusOK {
						t.Fatalf("before: %s on %s = %d, want 200", use, name, status)
					}
				}
				for _, c := range []*sseClient{
					openStream(t, s, "", map[string]string{"Authorization": "Bearer " + e.key}),
					openStream(t, s, "?sdk_key="+e.key, nil),
				} {
					if ev := c.next(t); ev.Name != "connected" {
						t.Fatalf("stream on %s began with %+v", name, ev)
					}
					streams = append(streams, c)
				}
			}
			if status := e.end(); status != http.StatusNoContent {
				t.Fatalf("ending the key = %d, want 204", status)
			}
			refusedWithin(t, a, "A", e.key, e.env, 0)
			refusedWithin(t, b, "B", e.key, e.env, time.Second)
			for _, c := range streams {
				c.ended(t)
			}
		})
	}
}

// Personal access tokens and sessions: losing the membership or the project
// refuses the next request on every instance and ends the user's streams
// there; a logout ends that session's streams and no other credential's.
func TestEndedAccessStopsUsersEverywhere(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t)
	_, admin := a.User(t, "admin@example.com", "admin")
	instances := map[string]*apptest.Server{"A": a, "B": b}

	type user struct {
		id      int64
		token   string
		cookie  *http.Cookie
		project projectBody
	}
	arrange := func(t *testing.T) user {
		email := uniq("member") + "@example.com"
		id, token := a.User(t, email, "editor")
		p := newProject(t, a, admin)
		a.Member(t, p.ID, id, "editor")
		return user{id, token, login(t, a, email, "password123").cookie, p}
	}
	readsProject := func(s *apptest.Server, u user, req apptest.Request) int {
		req.Method, req.Path = "GET", "/api/environments/"+u.project.envBySlug(t, "staging").String()+"/flags"
		status, _, _ := s.Do(t, req)
		return status
	}
	// streams opens, on each instance, a stream with the token and one with
	// the session, after checking both credentials read the project there.
	streams := func(t *testing.T, u user) (byToken, bySession []*sseClient) {
		t.Helper()
		for name, s := range instances {
			if readsProject(s, u, apptest.Request{Bearer: u.token}) != http.StatusOK || readsProject(s, u, apptest.Request{Cookie: u.cookie}) != http.StatusOK {
				t.Fatalf("before: the member cannot read the project on %s", name)
			}
			tc := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + u.token})
			sc := openStream(t, s, "", map[string]string{"Cookie": u.cookie.Name + "=" + u.cookie.Value})
			for _, c := range []*sseClient{tc, sc} {
				if ev := c.next(t); ev.Name != "connected" {
					t.Fatalf("stream on %s began with %+v", name, ev)
				}
			}
			byToken, bySession = append(byToken, tc), append(bySession, sc)
		}
		return byToken, bySession
	}
	lost := func(t *testing.T, u user, end func() int) {
		t.Helper()
		byToken, bySession := streams(t, u)
		if status := end(); status != http.StatusNoContent {
			t.Fatalf("ending access = %d, want 204", status)
		}
		for name, s := range instances {
			for cred, req := range map[string]apptest.Request{"token": {Bearer: u.token}, "session": {Cookie: u.cookie}} {
				if got := readsProject(s, u, req); got != http.StatusNotFound {
					t.Errorf("%s on %s after losing access = %d, want 404", cred, name, got)
				}
			}
		}
		for _, c := range append(byToken, bySession...) {
			c.ended(t)
		}
	}

	t.Run("member removal", func(t *testing.T) {
		u := arrange(t)
		lost(t, u, func() int {
			return send(t, a, admin, "DELETE", "/api/projects/"+u.project.ID.String()+"/members/"+itoa(u.id), nil)
		})
	})
	t.Run("project deletion", func(t *testing.T) {
		u := arrange(t)
		lost(t, u, func() int { return send(t, a, admin, "DELETE", "/api/projects/"+u.project.ID.String(), nil) })
	})
	t.Run("logout", func(t *testing.T) {
		u := arrange(t)
		byToken, bySession := streams(t, u)
		if status, _, _ := a.Do(t, apptest.Request{Method: "POST", Path: "/api/auth/logout", Cookie: u.cookie, Header: map[string]string{"X-Service-Request": "true"}}); status != http.StatusNoContent {
			t.Fatalf("logout = %d", status)
		}
		for _, c := range bySession {
			c.ended(t)
		}
		for name, s := range instances {
			if got := readsProject(s, u, apptest.Request{Cookie: u.cookie}); got != http.StatusUnauthorized {
				t.Errorf("the ended session on %s = %d, want 401", name, got)
			}
			if got := readsProject(s, u, apptest.Request{Bearer: u.token}); got != http.StatusOK {
				t.Errorf("the token on %s after the logout = %d, want 200", name, got)
			}
		}
		for _, c := range byToken {
			select {
			case _, ok := <-c.events:
				if !ok {
					t.Error("a logout ended a token's stream")
				}
			default:
			}
		}
	})
}
