package app_test

import (
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// No input a client sends ever answers 5xx: every route of the contract,
// with real identifiers, gets a set of hostile bodies and parameters.
func TestNoInputCausesAServerError(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	prod := fe.envs["production"]
	fe.call(t, "POST", fe.flags("production"), map[string]any{"key": "f", "is_enabled": true})
	fe.call(t, "POST", "/api/environments/"+prod+"/segments", map[string]any{"key": "s", "name": "S"})
	fe.call(t, "POST", "/api/environments/"+prod+"/experiments", map[string]any{"key": "e", "name": "E", "flag_key": "f", "goal_event_key": "g"})
	bodies := []string{
		``, `{}`, `[]`, `null`, `"x"`, `0`, `true`, `{"key":null}`, `[{}]`, `[null]`,
		`{"key":"f","is_enabled":true,"rules":[{"segment_key":"s","variant":{"a":[1,{"b":null}]}}]}`,
		`{"name":"` + strings.Repeat("n", 5000) + `","key":"k","email":"a@b.co","password":"12345678","role":"admin","scope":"read_only"}`,
		`{"rollout_percentage":1e308,"weight":-1e308,"expires_in_days":99999999999,"user_id":9223372036854775807}`,
		`{"scheduled_at":"9999-12-31T23:59:59Z","patch":{"is_enabled":true}}`,
		`{"scheduled_at":"0001-01-01T00:00:00Z","patch":[]}`,
		`{"url":"http://[::1","webhook_url":"http://127.0.0.1.evil.example/x","kind":"slack","events":["nope"]}`,
		`[{"flag_key":"f","value":"true","evaluated_at":"9999-12-31T23:59:59Z","context":{"deep":[[[[[]]]]]}}]`,
		`[{"event_key":"g","value":1e308,"occurred_at":"0001-01-01T00:00:00Z"}]`,
	}
	queries := []string{"", "?limit=-1&offset=-99999999&days=0", "?limit=99999999999", "?since_id=-1&status=pending", "?from=" + prod + "&to=" + prod, "?archived=maybe"}
	for _, r := range contractRoutes {
		if r.path == "/stream" {
			continue // a live stream does not end; its error cases are tested in stream_test.go
		}
		path := strings.NewReplacer(
			"{project_id}", fe.project, "{env_id}", prod, "{key}", "f", "{user_id}", "1", "{id}", "1",
		).Replace(r.path)
		for _, b := range bodies {
			for _, q := range queries {
				req := apptest.Request{Method: r.method, Path: path + q, Bearer: fe.token}
				if b != "" {
					req.Body = b
				}
				if status, raw, _ := fe.s.Do(t, req); status >= 500 {
					t.Errorf("%s %s%s with %.60s = %d %s", r.method, path, q, b, status, raw)
				}
			}
		}
	}
}
