package app_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// On the instance that acknowledged a flag write, every read that starts
// afterwards includes it: a snapshot, a new stream's bootstrap, OFREP single
// and bulk evaluations, even with the environment already held warm in the
// hub, where the change arrives asynchronously. Each read kind is tried 40
// times, right after the write's answer, on both buses.
func TestReadsSeeTheirWrites(t *testing.T) {
	t.Parallel()
	for _, busKind := range []string{"memory", "redis"} {
		t.Run(busKind, func(t *testing.T) {
			t.Parallel()
			var opts []app.Option
			env := map[string]string{}
			if busKind == "redis" {
				env["REDIS_URL"] = testenv.RedisURL(t)
				opts = append(opts, app.WithBusChannel("switchyard-test:"+uuid.NewString()))
			}
			s := apptest.Start(t, env, opts...)
			_, token := s.User(t, "ada@example.com", "admin")
			_, envs := s.DefaultProject(t)
			flags := "/api/environments/" + envs["production"].String() + "/flags"
			key := s.SDKKey(t, envs["production"])
			write := func(method, path string, body any) int64 {
				t.Helper()
				status, raw, _ := s.Do(t, apptest.Request{Method: method, Path: path, Bearer: token, Body: body})
				var f struct {
					Version int64 `json:"version"`
				}
				if status != 200 || json.Unmarshal(raw, &f) != nil {
					t.Fatalf("%s %s = %d %s", method, path, status, raw)
				}
				return f.Version
			}
			write("POST", flags, map[string]any{"key": "hot", "is_enabled": true, "rollout_percentage": 0})

			reads := map[string]func() (version int64){
				"snapshot": func() int64 {
					_, raw, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key})
					var all []struct {
						Key     string `json:"key"`
						Version int64  `json:"version"`
					}
					if err := json.Unmarshal(raw, &all); err != nil {
						t.Fatalf("snapshot %s: %v", raw, err)
					}
					for _, f := range all {
						if f.Key == "hot" {
							return f.Version
						}
					}
					return 0
				},
				"ofrep single": func() int64 {
					_, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags/hot", Bearer: key,
						Body: map[string]any{"context": map[string]any{"targetingKey": "u-1"}}})
					var r struct {
						Metadata struct {
							Version int64 `json:"version"`
						} `json:"metadata"`
					}
					if err := json.Unmarshal(raw, &r); err != nil {
						t.Fatalf("evaluation %s: %v", raw, err)
					}
					return r.Metadata.Version
				},
				"ofrep bulk": func() int64 {
					_, raw, _ := s.Do(t, apptest.Request{Method: "POST", Path: "/ofrep/v1/evaluate/flags", Bearer: key,
						Body: map[string]any{"context": map[string]any{"targetingKey": "u-1"}}})
					var r struct {
						Flags []struct {
							Key      string `json:"key"`
							Metadata struct {
								Version int64 `json:"version"`
							} `json:"metadata"`
						} `json:"flags"`
					}
					if err := json.Unmarshal(raw, &r); err != nil {
						t.Fatalf("bulk evaluation %s: %v", raw, err)
					}
					for _, f := range r.Flags {
						if f.Key == "hot" {
							return f.Metadata.Version
						}
					}
					return 0
				},
			}
			for name, read := range reads {
				read() // the environment is now warm in the hub
				missed := 0
				for i := 1; i <= 40; i++ {
					want := write("PATCH", flags+"/hot", map[string]any{"rollout_percentage": i % 101})
					if got := read(); got != want {
						missed++
					}
				}
				if missed > 0 {
					t.Errorf("%s: %d of 40 reads right after a PATCH did not include it", name, missed)
				}
			}

			// A new stream's bootstrap includes a flag created just before.
			missed := 0
			for i := range 40 {
				created := fmt.Sprintf("new-%d", i)
				write("POST", flags, map[string]any{"key": created, "is_enabled": true})
				c := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + key})
				found := false
				for ev := c.next(t); ev.Name != "ready"; ev = c.next(t) {
					if ev.Name == "update" && field(sseData(t, ev.Data), "flag", "key") == created {
						found = true
					}
				}
				c.cancel()
				if !found {
					missed++
				}
			}
			if missed > 0 {
				t.Errorf("stream bootstrap: %d of 40 did not include the flag created just before", missed)
			}
		})
	}
}
