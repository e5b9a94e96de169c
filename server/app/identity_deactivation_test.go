package app_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// activeBody is a user as the deactivation tests read it.
type activeBody struct {
	ID        int64 `json:"id"`
	Active    bool  `json:"active"`
	SsoLinked bool  `json:"sso_linked"`
}

// Deactivating a user on A refuses their session and token on the very next
// request on every instance, ends their streams everywhere and refuses their
// password; reactivating lets them sign in again, with their tokens back and
// their old sessions still ended (docs/reference/identity.md, Deactivation).
func TestDeactivationEndsEverythingEverywhere(t *testing.T) {
	t.Parallel()
	a, b := twoInstances(t)
	_, admin := a.User(t, "admin@example.com", "admin")
	instances := map[string]*apptest.Server{"A": a, "B": b}

	email := uniq("member") + "@example.com"
	id, token := a.User(t, email, "editor")
	p := newProject(t, a, admin)
	a.Member(t, p.ID, id, "editor")
	cookie := login(t, a, email, "password123").cookie
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	me := func(s *apptest.Server, req apptest.Request) int {
		req.Method, req.Path = "GET", "/api/auth/me"
		status, _, _ := s.Do(t, req)
		return status
	}
	var streams []*sseClient
	for name, s := range instances {
		for cred, req := range map[string]apptest.Request{"token": {Bearer: token}, "session": {Cookie: cookie}} {
			if got := me(s, req); got != http.StatusOK {
				t.Fatalf("before: %s on %s = %d, want 200", cred, name, got)
			}
		}
		for _, c := range []*sseClient{
			openStream(t, s, "", map[string]string{"Authorization": "Bearer " + token}),
			openStream(t, s, "", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value}),
		} {
			if ev := c.next(t); ev.Name != "connected" {
				t.Fatalf("stream on %s began with %+v", name, ev)
			}
			streams = append(streams, c)
		}
	}

	var u activeBody
	must(t, a, admin, "PATCH", "/api/users/"+itoa(id), map[string]bool{"active": false}, http.StatusOK, &u)
	if u.Active || u.SsoLinked {
		t.Errorf("deactivated = %+v, want active and sso_linked false", u)
	}
	// The very next request, B's first: no waiting for the bus.
	for _, name := range []string{"B", "A"} {
		for cred, req := range map[string]apptest.Request{"token": {Bearer: token}, "session": {Cookie: cookie}} {
			if got := me(instances[name], req); got != http.StatusUnauthorized {
				t.Errorf("%s on %s after deactivation = %d, want 401", cred, name, got)
			}
		}
	}
	for _, c := range streams {
		c.ended(t)
	}
	for name, s := range instances {
		if c := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + token}); c.resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a new stream with the token on %s = %d, want 401", name, c.resp.StatusCode)
		}
	}
	r := login(t, b, email, "password123")
	if r.status != http.StatusUnauthorized || r.cookie != nil || r.body["error"] != "this account is deactivated" {
		t.Errorf("login while deactivated = %d %v, cookie %v", r.status, r.body, r.cookie)
	}
	if r.attemptsRemaining != 5 {
		t.Errorf("a deactivated user's right password counted as a failure: %v attempts remaining, want 5", r.attemptsRemaining)
	}
	// A wrong password says no more than for anyone else, and counts.
	if r := login(t, b, email, "wrong password"); r.status != http.StatusUnauthorized || r.body["error"] != "invalid credentials" || r.attemptsRemaining != 4 {
		t.Errorf("wrong password while deactivated = %d %v", r.status, r.body)
	}
	var list []activeBody
	must(t, b, admin, "GET", "/api/users", nil, http.StatusOK, &list)
	for _, l := range list {
		if want := l.ID != id; l.Active != want || l.SsoLinked {
			t.Errorf("listed %+v, want active %v and not linked", l, want)
		}
	}

	must(t, a, admin, "PATCH", "/api/users/"+itoa(id), map[string]bool{"active": true}, http.StatusOK, &u)
	if !u.Active {
		t.Errorf("reactivated = %+v", u)
	}
	r = login(t, b, email, "password123")
	if r.status != http.StatusOK || r.cookie == nil {
		t.Fatalf("login after reactivation = %d %v", r.status, r.body)
	}
	for name, s := range instances {
		if got := me(s, apptest.Request{Cookie: r.cookie}); got != http.StatusOK {
			t.Errorf("the new session on %s = %d, want 200", name, got)
		}
		if got := me(s, apptest.Request{Bearer: token}); got != http.StatusOK {
			t.Errorf("the token on %s after reactivation = %d, want 200", name, got)
		}
		if got := me(s, apptest.Request{Cookie: cookie}); got != http.StatusUnauthorized {
			t.Errorf("the session deactivation ended, on %s = %d, want 401", name, got)
		}
	}
}

// Nobody deactivates themself or the last active admin over HTTP, and a
// deactivated admin no longer counts: with the only other admin deactivated,
// demoting yourself is refused.
func TestDeactivationInvariants(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	adminID, admin := s.User(t, "admin@example.com", "admin")
	otherID, _ := s.User(t, "other@example.com", "admin")

	for name, body := range map[string]any{
		"deactivating yourself": map[string]bool{"active": false},
		"a string for active":   map[string]string{"active": "false"},
	} {
		if status, raw := call(t, s, admin, "PATCH", "/api/users/"+itoa(adminID), body); status != http.StatusUnprocessableEntity {
			t.Errorf("%s = %d %s, want 422", name, status, raw)
		}
	}
	must(t, s, admin, "PATCH", "/api/users/"+itoa(otherID), map[string]bool{"active": false}, http.StatusOK, nil)
	status, raw := call(t, s, admin, "PATCH", "/api/users/"+itoa(adminID), map[string]string{"role": "viewer"})
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	if status != http.StatusUnprocessableEntity || body["error"] != "the last workspace admin cannot be demoted" {
		t.Errorf("demoting the last active admin = %d %s, want 422", status, raw)
	}
	// The deactivated admin may go: the active one remains.
	if status := send(t, s, admin, "DELETE", "/api/users/"+itoa(otherID), nil); status != http.StatusNoContent {
		t.Errorf("deleting a deactivated admin = %d, want 204", status)
	}
	// A viewer cannot deactivate anyone.
	viewerID, viewer := s.User(t, "viewer@example.com", "viewer")
	if status, raw := call(t, s, viewer, "PATCH", "/api/users/"+itoa(viewerID), map[string]bool{"active": false}); status != http.StatusForbidden {
		t.Errorf("a viewer deactivating = %d %s, want 403", status, raw)
	}
}
