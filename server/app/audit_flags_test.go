package app_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// envLogEntry is an entry of GET /api/environments/{env_id}/audit.
type envLogEntry struct {
	FlagKey    string          `json:"flag_key"`
	ActorEmail string          `json:"actor_email"`
	Action     string          `json:"action"`
	BeforeData json.RawMessage `json:"before_data"`
	AfterData  json.RawMessage `json:"after_data"`
	Metadata   json.RawMessage `json:"metadata"`
}

// envLog returns an environment's flag audit log, newest first, checking
// that every entry has exactly the fields the route has always answered.
func envLog(t *testing.T, fe *flagEnv, slug string) []envLogEntry {
	t.Helper()
	path := "/api/environments/" + fe.envs[slug] + "/audit?limit=500"
	var raw []map[string]json.RawMessage
	must(t, fe.s, fe.token, http.MethodGet, path, nil, http.StatusOK, &raw)
	want := []string{"action", "actor_email", "after_data", "before_data", "created_at", "environment_id", "flag_key", "id", "metadata"}
	out := make([]envLogEntry, len(raw))
	for i, fields := range raw {
		keys := slices.Sorted(maps.Keys(fields))
		if d := cmp.Diff(want, keys); d != "" {
			t.Errorf("environment log entry fields (-want +got):\n%s", d)
		}
		b, _ := json.Marshal(fields)
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// sameJSON reports whether two encodings hold the same value (null and
// absent alike).
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if len(a) > 0 {
		if err := json.Unmarshal(a, &x); err != nil {
			t.Fatal(err)
		}
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &y); err != nil {
			t.Fatal(err)
		}
	}
	return cmp.Equal(x, y)
}

// trailActionOf is the trail's action for an environment log's flag action.
func trailActionOf(e envLogEntry) string {
	switch {
	case e.Action == "delete":
		return "flag.deleted"
	case len(e.BeforeData) == 0 || string(e.BeforeData) == "null":
		return "flag.created"
	}
	return "flag.updated"
}

// Every flag write the environment's log records (create, update, replace,
// archive, unarchive, promote, delete) is also an entry of the trail, with
// the same before and after, in the flag's environment and project; the
// environment's log answers as it always has.
func TestAuditFlagsEveryEnvironmentLogEntryIsInTheTrail(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	prod := fe.flags("production")
	writes := []struct {
		method, path string
		body         any
	}{
		{"POST", prod, map[string]any{"key": "checkout", "is_enabled": true, "rollout_percentage": 25, "tags": []string{"web"}}},
		{"PATCH", prod + "/checkout", map[string]any{"rollout_percentage": 50}},
		{"POST", prod, map[string]any{"key": "checkout", "is_enabled": false}},
		{"POST", prod + "/checkout/archive", nil},
		{"POST", prod + "/checkout/unarchive", nil},
		{"POST", fe.flags("staging"), map[string]any{"key": "search", "is_enabled": true}},
		{"POST", fe.flags("staging") + "/search/promote", map[string]any{"target_env_id": fe.envs["production"]}},
		{"PATCH", fe.flags("staging") + "/search", map[string]any{"is_enabled": false}},
		{"POST", fe.flags("staging") + "/search/promote", map[string]any{"target_env_id": fe.envs["production"]}},
		{"DELETE", prod + "/checkout", nil},
	}
	for _, w := range writes {
		if status, body := fe.call(t, w.method, w.path, w.body); status != 200 && status != 204 {
			t.Fatalf("%s %s = %d %v", w.method, w.path, status, body)
		}
	}

	log := envLog(t, fe, "production")
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action)
	}
	if d := cmp.Diff([]string{"delete", "promote", "promote", "unarchive", "archive", "replace", "update", "create"}, actions); d != "" {
		t.Errorf("environment log actions (-want +got):\n%s", d)
	}

	entries := trail(t, fe.s, fe.token, "environment_id="+fe.envs["production"]+"&resource_type=flag")
	if len(entries) != len(log) {
		t.Fatalf("the trail has %d flag entries for production, the environment's log %d", len(entries), len(log))
	}
	var tokenLabel string
	for i, e := range entries {
		l := log[i]
		if want := trailActionOf(l); e.Action != want {
			t.Errorf("entry %d: action %s for the log's %s, want %s", i, e.Action, l.Action, want)
		}
		if e.Resource.Type != "flag" || e.Resource.ID != l.FlagKey || e.Resource.Key == nil || *e.Resource.Key != l.FlagKey {
			t.Errorf("entry %d: resource %+v, want the flag %s", i, e.Resource, l.FlagKey)
		}
		if e.EnvironmentID == nil || e.EnvironmentID.String() != fe.envs["production"] || e.ProjectID == nil || e.ProjectID.String() != fe.project {
			t.Errorf("entry %d: environment %v project %v", i, e.EnvironmentID, e.ProjectID)
		}
		if !sameJSON(t, e.Before, l.BeforeData) || !sameJSON(t, e.After, l.AfterData) {
			t.Errorf("entry %d (%s): trail before/after %s / %s, log %s / %s", i, l.Action, e.Before, e.After, l.BeforeData, l.AfterData)
		}
		// The admin's personal access token: whose it is, and which by prefix.
		if e.Actor.Kind != "token" || e.Actor.Email == nil || *e.Actor.Email != "admin@example.com" || e.Actor.Label == nil {
			t.Fatalf("entry %d: actor %+v, want the admin's token", i, e.Actor)
		}
		tokenLabel = *e.Actor.Label
	}
	if !strings.HasPrefix(fe.token, tokenLabel) || len(tokenLabel) >= len(fe.token) || len(tokenLabel) < 8 {
		t.Errorf("token label %q is not a prefix of the token", tokenLabel)
	}
	// The promotion that created "search" in production is its creation
	// there; the second, an update.
	created := trailFind(t, entries, "flag.created", "search")
	if trailState(t, created.Before) != nil || trailState(t, created.After)["is_enabled"] != true {
		t.Errorf("promotion's creation: before %s after %s", created.Before, created.After)
	}
	deleted := trailFind(t, entries, "flag.deleted", "checkout")
	if trailState(t, deleted.After) != nil || trailState(t, deleted.Before)["key"] != "checkout" {
		t.Errorf("deletion: before %s after %s", deleted.Before, deleted.After)
	}
	// Staging's writes are staging's entries.
	if n := len(trail(t, fe.s, fe.token, "environment_id="+fe.envs["staging"]+"&resource_type=flag")); n != 2 {
		t.Errorf("staging has %d flag entries, want 2", n)
	}
}

// A flag write names who made it: a user signed in with a session, a
// user's personal access token, an SDK key.
func TestAuditFlagsActors(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	prod := fe.flags("production")
	fe.call(t, "POST", prod, map[string]any{"key": "f", "is_enabled": false})

	// A session.
	r := login(t, fe.s, "admin@example.com", "password123")
	if r.status != http.StatusOK || r.cookie == nil {
		t.Fatalf("login = %d %v", r.status, r.body)
	}
	status, _, _ := fe.s.Do(t, apptest.Request{Method: "PATCH", Path: prod + "/f", Cookie: r.cookie,
		Header: map[string]string{"X-Service-Request": "true"}, Body: map[string]any{"is_enabled": true}})
	if status != http.StatusOK {
		t.Fatalf("patch by session = %d", status)
	}
	entries := trail(t, fe.s, fe.token, "resource_type=flag&resource_id=f")
	e := entries[0]
	if e.Action != "flag.updated" || e.Actor.Kind != "user" || e.Actor.Email == nil || *e.Actor.Email != "admin@example.com" ||
		e.Actor.ID == nil || *e.Actor.ID != strconv.FormatFloat(r.body["id"].(float64), 'f', -1, 64) || e.Actor.Label != nil {
		t.Errorf("session write: %s by %+v", e.Action, e.Actor)
	}
	if trailState(t, e.Before)["is_enabled"] != false || trailState(t, e.After)["is_enabled"] != true {
		t.Errorf("session write: before %s after %s", e.Before, e.After)
	}

	// An SDK key acts as an admin of its environment.
	key := fe.s.SDKKey(t, mustUUID(t, fe.envs["production"]))
	if status, body := fe.call(t, "PATCH", prod+"/f", map[string]any{"rollout_percentage": 10}, key); status != http.StatusOK {
		t.Fatalf("patch by SDK key = %d %v", status, body)
	}
	e = trail(t, fe.s, fe.token, "resource_type=flag&resource_id=f")[0]
	if e.Actor.Kind != "sdk_key" || e.Actor.Label == nil || !strings.HasPrefix(key, *e.Actor.Label) || e.Actor.Email != nil {
		t.Errorf("SDK key write: actor %+v", e.Actor)
	}
	if log := envLog(t, fe, "production"); log[0].ActorEmail != "sdk:"+*e.Actor.Label {
		t.Errorf("environment log actor %q, want sdk:%s", log[0].ActorEmail, *e.Actor.Label)
	}
	// The request that made it.
	if e.Request.RequestID == nil || e.Request.IP == nil {
		t.Errorf("request %+v, want its id and address", e.Request)
	}
}

// Segment writes are entries whose resource id is the segment's key, in
// the segment's environment and project, before and after the segment as
// the API shows it.
func TestAuditFlagsSegments(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	segs := "/api/environments/" + fe.envs["production"] + "/segments"
	rules := []any{map[string]any{"attribute": "plan", "operator": "equals", "values": []string{"pro"}}}
	var created map[string]any
	must(t, fe.s, fe.token, "POST", segs, map[string]any{"key": "beta", "name": "Beta users", "description": "opt-in", "rules": rules}, http.StatusOK, &created)
	must(t, fe.s, fe.token, "PATCH", segs+"/beta", map[string]any{"name": "Beta testers", "description": nil}, http.StatusOK, nil)
	must(t, fe.s, fe.token, "DELETE", segs+"/beta", nil, http.StatusNoContent, nil)

	entries := trail(t, fe.s, fe.token, "resource_type=segment")
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
		if e.Resource.ID != "beta" || e.Resource.Key == nil || *e.Resource.Key != "beta" || e.Resource.Name == nil {
			t.Errorf("%s: resource %+v", e.Action, e.Resource)
		}
		if e.EnvironmentID == nil || e.EnvironmentID.String() != fe.envs["production"] || e.ProjectID == nil || e.ProjectID.String() != fe.project {
			t.Errorf("%s: environment %v project %v", e.Action, e.EnvironmentID, e.ProjectID)
		}
		if e.Actor.Kind != "token" {
			t.Errorf("%s: actor %+v", e.Action, e.Actor)
		}
	}
	if d := cmp.Diff([]string{"segment.deleted", "segment.updated", "segment.created"}, actions); d != "" {
		t.Fatalf("segment actions (-want +got):\n%s", d)
	}
	c := trailFind(t, entries, "segment.created", "beta")
	if trailState(t, c.Before) != nil {
		t.Errorf("created: before %s", c.Before)
	}
	if d := cmp.Diff(created, trailState(t, c.After)); d != "" {
		t.Errorf("created: after is not the API's segment (-api +trail):\n%s", d)
	}
	u := trailFind(t, entries, "segment.updated", "beta")
	if b, a := trailState(t, u.Before), trailState(t, u.After); b["name"] != "Beta users" || b["description"] != "opt-in" ||
		a["name"] != "Beta testers" || a["description"] != nil || *u.Resource.Name != "Beta testers" {
		t.Errorf("updated: before %s after %s", u.Before, u.After)
	}
	d := trailFind(t, entries, "segment.deleted", "beta")
	if trailState(t, d.After) != nil || trailState(t, d.Before)["name"] != "Beta testers" {
		t.Errorf("deleted: before %s after %s", d.Before, d.After)
	}
}
