package app_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
)

// t0 is "now" in the measurement tests: the server's clock reads it.
var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// measEnv is a running server whose clock reads t0, with an admin token and
// the Default project's environments.
type measEnv struct {
	*flagEnv
	clock *apptest.Clock
}

func newMeasEnv(t *testing.T) *measEnv {
	t.Helper()
	return newMeasEnvAt(t, t0)
}

// newMeasEnvAt is newMeasEnv with the server's clock reading now.
func newMeasEnvAt(t *testing.T, now time.Time) *measEnv {
	t.Helper()
	return newMeasEnvWith(t, now, nil)
}

// newMeasEnvWith is newMeasEnvAt with environment variables and options
// for the server.
func newMeasEnvWith(t *testing.T, now time.Time, env map[string]string, opts ...app.Option) *measEnv {
	t.Helper()
	clock := apptest.NewClock(now)
	s := apptest.Start(t, env, append(opts, app.WithClock(clock.Now))...)
	_, token := s.User(t, "admin@example.com", "admin")
	project, envs := s.DefaultProject(t)
	fe := &flagEnv{s: s, token: token, project: project.String(), envs: map[string]string{}}
	for slug, id := range envs {
		fe.envs[slug] = id.String()
	}
	return &measEnv{flagEnv: fe, clock: clock}
}

// path is the measurement route under the production environment.
func (me *measEnv) path(rest string) string {
	return "/api/environments/" + me.envs["production"] + rest
}

// mustPost posts a batch and fails the test unless it answers 204.
func (me *measEnv) mustPost(t *testing.T, rest string, items any) {
	t.Helper()
	if status, body := me.call(t, "POST", me.path(rest), items); status != 204 {
		t.Fatalf("POST %s = %d %v", rest, status, body)
	}
}

// imp is one impression record for a batch.
func imp(flag, user, value string, at time.Time) map[string]any {
	m := map[string]any{"flag_key": flag, "value": value, "evaluated_at": at.Format(time.RFC3339Nano)}
	if user != "" {
		m["user_id"] = user
	}
	return m
}

// goal is one goal event for a batch.
func goal(key, user string, at time.Time) map[string]any {
	m := map[string]any{"event_key": key, "occurred_at": at.Format(time.RFC3339Nano)}
	if user != "" {
		m["user_id"] = user
	}
	return m
}

// users returns prefix1 .. prefixN.
func users(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return out
}

// decode re-decodes a generic JSON value into v.
func decode(t *testing.T, from, v any) {
	t.Helper()
	raw, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
