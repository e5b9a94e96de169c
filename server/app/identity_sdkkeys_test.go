package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

func TestSDKKeys(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	other := newProject(t, s, admin)
	keys := "/api/projects/" + p.ID.String() + "/keys"
	staging := p.envBySlug(t, "staging")

	var k sdkKeyBody
	must(t, s, admin, "POST", keys, map[string]any{"name": "Web", "environment_id": staging}, http.StatusOK, &k)
	if k.Name != "Web" || !strings.HasPrefix(k.Key, "sk_live_") || len(k.Key) < 40 || k.Prefix != k.Key[:12] ||
		k.EnvironmentID != staging || k.EnvironmentName != "Staging" {
		t.Errorf("created key = %+v", k)
	}
	if !sdkKeyWorks(t, s, k.Key, staging) {
		t.Error("the new key is not accepted")
	}

	status, raw := call(t, s, admin, "GET", keys, nil)
	if status != http.StatusOK || strings.Contains(string(raw), k.Key) || strings.Contains(string(raw), `"key"`) {
		t.Errorf("list keys = %d %s, want no full key", status, raw)
	}
	var list []sdkKeyBody
	must(t, s, admin, "GET", keys, nil, http.StatusOK, &list)
	want := []sdkKeyBody{ // newest first
		{ID: k.ID, Name: "Web", Prefix: k.Prefix, EnvironmentID: staging, EnvironmentName: "Staging"},
		{ID: p.SDKKey.ID, Name: p.SDKKey.Name, Prefix: p.SDKKey.Prefix, EnvironmentID: p.envBySlug(t, "production"), EnvironmentName: "Production"},
	}
	if d := cmp.Diff(want, list); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}

	// The environment must belong to the project: 422 naming environment_id.
	for name, env := range map[string]uuid.UUID{
		"another project's environment": other.envBySlug(t, "staging"),
		"an unknown environment":        uuid.New(),
	} {
		var e errorBody
		must(t, s, admin, "POST", keys, map[string]any{"name": "X", "environment_id": env}, http.StatusUnprocessableEntity, &e)
		if len(e.Details) != 1 || e.Details[0].Field != "environment_id" {
			t.Errorf("create with %s: details %+v, want environment_id", name, e.Details)
		}
	}
	must(t, s, admin, "POST", keys, map[string]any{"name": "X", "environment_id": "nope"}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "POST", keys, map[string]any{"name": "", "environment_id": staging}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "POST", keys, map[string]any{"name": "  ", "environment_id": staging}, http.StatusUnprocessableEntity, nil)

	// Revocation is immediate; another project's key is not found here.
	must(t, s, admin, "DELETE", keys+"/"+itoa(other.SDKKey.ID), nil, http.StatusNotFound, nil)
	must(t, s, admin, "DELETE", keys+"/987654", nil, http.StatusNotFound, nil)
	must(t, s, admin, "DELETE", keys+"/"+itoa(k.ID), nil, http.StatusNoContent, nil)
	if sdkKeyWorks(t, s, k.Key, staging) {
		t.Error("a revoked key still works")
	}
	must(t, s, admin, "DELETE", keys+"/"+itoa(k.ID), nil, http.StatusNotFound, nil)
	var e errorBody
	must(t, s, admin, "DELETE", keys+"/"+itoa(p.SDKKey.ID), nil, http.StatusUnprocessableEntity, &e)
	if e.Error == "" {
		t.Error("422 without a message")
	}
	if !sdkKeyWorks(t, s, other.SDKKey.Key, other.SDKKey.EnvironmentID) || !sdkKeyWorks(t, s, p.SDKKey.Key, p.SDKKey.EnvironmentID) {
		t.Error("a key that was not revoked stopped working")
	}
}

// docs/reference/identity.md, Invariants: one server key per project remains
// when all are revoked at once.
func TestRevokeSDKKeysConcurrently(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	ids := []int64{p.SDKKey.ID}
	for range 3 {
		ids = append(ids, newKey(t, s, admin, p.ID, p.envBySlug(t, "staging")).ID)
	}
	var fns []func() int
	for _, id := range ids {
		fns = append(fns, func() int { return send(t, s, admin, "DELETE", "/api/projects/"+p.ID.String()+"/keys/"+itoa(id), nil) })
	}
	statuses := concurrently(fns...)
	if count(statuses, http.StatusNoContent) != len(ids)-1 || count(statuses, http.StatusUnprocessableEntity) != 1 {
		t.Errorf("revoking all %d keys at once answered %v, want %d × 204 and one 422", len(ids), statuses, len(ids)-1)
	}
	assertKeys(t, s, admin, p.ID, 1)
}
