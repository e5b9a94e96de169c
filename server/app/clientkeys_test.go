package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// clientKeyBody is an SDK key as the API shows it, with its kind.
type clientKeyBody struct {
	ID     int64  `json:"id"`
	Kind   string `json:"kind"`
	Key    string `json:"key"`
	Prefix string `json:"prefix"`
}

func newKindKey(t *testing.T, s *apptest.Server, admin string, project, env uuid.UUID, kind any) clientKeyBody {
	t.Helper()
	var k clientKeyBody
	must(t, s, admin, "POST", "/api/projects/"+project.String()+"/keys",
		map[string]any{"name": uniq("key"), "environment_id": env, "kind": kind}, http.StatusOK, &k)
	return k
}

// docs/reference/identity.md, SDK key management: kinds, prefixes,
// validation, listing.
func TestSDKKeyKinds(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	staging := p.envBySlug(t, "staging")
	keys := "/api/projects/" + p.ID.String() + "/keys"

	client := newKindKey(t, s, admin, p.ID, staging, "client")
	if client.Kind != "client" || !strings.HasPrefix(client.Key, "pk_live_") || client.Prefix != client.Key[:12] {
		t.Errorf("client key = %+v", client)
	}
	for _, kind := range []any{"server", nil} {
		if k := newKindKey(t, s, admin, p.ID, staging, kind); k.Kind != "server" || !strings.HasPrefix(k.Key, "sk_live_") {
			t.Errorf("kind %v: key = %+v, want a server key", kind, k)
		}
	}
	var k clientKeyBody
	must(t, s, admin, "POST", keys, map[string]any{"name": "no kind", "environment_id": staging}, http.StatusOK, &k)
	if k.Kind != "server" {
		t.Errorf("absent kind = %q, want server", k.Kind)
	}
	for _, kind := range []any{"", "Server", "CLIENT", "publishable", 1, true} {
		var e errorBody
		status, raw := call(t, s, admin, "POST", keys, map[string]any{"name": "x", "environment_id": staging, "kind": kind})
		_ = json.Unmarshal(raw, &e)
		if status != http.StatusUnprocessableEntity || (status == 422 && len(e.Details) > 0 && e.Details[0].Field != "kind") {
			t.Errorf("kind %#v = %d %s, want 422 naming kind", kind, status, raw)
		}
	}
	var list []clientKeyBody
	must(t, s, admin, "GET", keys, nil, http.StatusOK, &list)
	kinds := map[int64]string{}
	for _, k := range list {
		kinds[k.ID] = k.Kind
	}
	if kinds[client.ID] != "client" || kinds[p.SDKKey.ID] != "server" {
		t.Errorf("listed kinds = %v", kinds)
	}
}

// A client key reaches exactly the ingest routes of its environment (and
// OFREP); everything else answers 403, except another environment's ingest,
// 404. Revoked, it answers 401.
func TestClientKeyReach(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	env, other := p.envBySlug(t, "staging"), p.envBySlug(t, "production")
	key := newKindKey(t, s, admin, p.ID, env, "client")
	now := time.Now().UTC().Format(time.RFC3339)
	impressions := []map[string]any{{"flag_key": "f", "user_id": "u1", "value": "true", "timestamp": now}}
	events := []map[string]any{{"event_key": "signup", "user_id": "u1"}}

	cases := []struct {
		method, path string
		body         any
		want         int
	}{
		{"POST", "/api/environments/" + env.String() + "/impressions", impressions, http.StatusNoContent},
		{"POST", "/api/environments/" + env.String() + "/events", events, http.StatusNoContent},
		{"POST", "/api/environments/" + other.String() + "/impressions", impressions, http.StatusNotFound},
		{"POST", "/api/environments/" + other.String() + "/events", events, http.StatusNotFound},
		{"GET", "/api/environments/" + env.String() + "/flags", nil, http.StatusForbidden},
		{"POST", "/api/environments/" + env.String() + "/flags", map[string]any{"key": "x", "is_enabled": true}, http.StatusForbidden},
		{"GET", "/api/environments/" + env.String() + "/impressions", nil, http.StatusForbidden},
		{"GET", "/api/environments/" + env.String() + "/impressions/stats", nil, http.StatusForbidden},
		{"GET", "/api/environments/" + env.String() + "/segments", nil, http.StatusForbidden},
		{"GET", "/api/environments/" + env.String() + "/experiments", nil, http.StatusForbidden},
		{"GET", "/api/environments/" + other.String() + "/flags", nil, http.StatusForbidden},
		{"GET", "/api/projects/" + p.ID.String() + "/keys", nil, http.StatusForbidden},
		{"GET", "/api/projects", nil, http.StatusForbidden},
		{"GET", "/api/auth/me", nil, http.StatusForbidden},
	}
	for _, c := range cases {
		if status, raw := call(t, s, key.Key, c.method, c.path, c.body); status != c.want {
			t.Errorf("%s %s with a client key = %d %s, want %d", c.method, c.path, status, raw, c.want)
		}
	}
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/flags/snapshot", Bearer: key.Key}); status != http.StatusForbidden {
		t.Errorf("snapshot with a client key = %d, want 403", status)
	}
	for _, c := range []*sseClient{
		openStream(t, s, "", map[string]string{"Authorization": "Bearer " + key.Key}),
		openStream(t, s, "?sdk_key="+key.Key, nil),
	} {
		if c.resp.StatusCode != http.StatusForbidden {
			t.Errorf("stream with a client key = %d, want 403", c.resp.StatusCode)
		}
	}
	// A client key's value with a server key's prefix (or the reverse) is no key.
	if status, _ := call(t, s, "sk_live_"+strings.TrimPrefix(key.Key, "pk_live_"), "POST", cases[0].path, impressions); status != http.StatusUnauthorized {
		t.Errorf("the client key's secret as a server key = %d, want 401", status)
	}

	must(t, s, admin, "DELETE", "/api/projects/"+p.ID.String()+"/keys/"+itoa(key.ID), nil, http.StatusNoContent, nil)
	if status, _ := call(t, s, key.Key, "POST", cases[0].path, impressions); status != http.StatusUnauthorized {
		t.Errorf("a revoked client key = %d, want 401", status)
	}
}

// docs/reference/identity.md, SDK key management: the last server key stays;
// client keys neither count nor are protected.
func TestLastServerKey(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	prod, staging := p.envBySlug(t, "production"), p.envBySlug(t, "staging")
	c1 := newKindKey(t, s, admin, p.ID, prod, "client")
	c2 := newKindKey(t, s, admin, p.ID, staging, "client")
	keys := "/api/projects/" + p.ID.String() + "/keys/"
	must(t, s, admin, "DELETE", keys+itoa(p.SDKKey.ID), nil, http.StatusUnprocessableEntity, nil)
	// The only server key lives in production: deleting production would
	// leave client keys only.
	must(t, s, admin, "DELETE", "/api/projects/"+p.ID.String()+"/environments/"+prod.String(), nil, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "DELETE", keys+itoa(c1.ID), nil, http.StatusNoContent, nil)
	must(t, s, admin, "DELETE", keys+itoa(c2.ID), nil, http.StatusNoContent, nil)
}

// docs/reference/flags.md, Client-side flags: client_side is a flag field like
// any other: default false, null means false, merge patch, replace, promote and
// diff carry it.
func TestClientSideFlagField(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	prod, staging := p.envBySlug(t, "production"), p.envBySlug(t, "staging")
	flags := "/api/environments/" + staging.String() + "/flags"
	type flag struct {
		ClientSide *bool `json:"client_side"`
		Version    int64 `json:"version"`
	}
	var f flag
	must(t, s, admin, "POST", flags, map[string]any{"key": "banner", "is_enabled": true}, http.StatusOK, &f)
	if f.ClientSide == nil || *f.ClientSide {
		t.Fatalf("a new flag's client_side = %v, want false", f.ClientSide)
	}
	must(t, s, admin, "PATCH", flags+"/banner", map[string]any{"client_side": true}, http.StatusOK, &f)
	if !*f.ClientSide {
		t.Errorf("patched client_side = false, want true")
	}
	must(t, s, admin, "GET", flags+"/banner", nil, http.StatusOK, &f)
	if !*f.ClientSide {
		t.Errorf("stored client_side = false, want true")
	}
	var diff []struct {
		Key     string   `json:"key"`
		Status  string   `json:"status"`
		Changed []string `json:"changed_fields"`
	}
	must(t, s, admin, "POST", "/api/environments/"+prod.String()+"/flags", map[string]any{"key": "banner", "is_enabled": true}, http.StatusOK, nil)
	must(t, s, admin, "GET", "/api/projects/"+p.ID.String()+"/flags/diff?from="+staging.String()+"&to="+prod.String(), nil, http.StatusOK, &diff)
	if len(diff) != 1 || diff[0].Status != "different" || strings.Join(diff[0].Changed, ",") != "client_side" {
		t.Errorf("diff = %+v, want banner different in client_side", diff)
	}
	must(t, s, admin, "POST", flags+"/banner/promote", map[string]any{"target_env_id": prod}, http.StatusOK, nil)
	must(t, s, admin, "GET", "/api/environments/"+prod.String()+"/flags/banner", nil, http.StatusOK, &f)
	if !*f.ClientSide {
		t.Errorf("promoted client_side = false, want true")
	}
	must(t, s, admin, "PATCH", flags+"/banner", map[string]any{"client_side": nil}, http.StatusOK, &f)
	if *f.ClientSide {
		t.Errorf("client_side patched to null = true, want false")
	}
	must(t, s, admin, "POST", flags, map[string]any{"key": "banner", "is_enabled": true, "client_side": true}, http.StatusOK, &f)
	if !*f.ClientSide {
		t.Errorf("replaced with client_side true = false")
	}
	must(t, s, admin, "PATCH", flags+"/banner", map[string]any{"client_side": "yes"}, http.StatusUnprocessableEntity, nil)
}
