package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

func TestUsers(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	adminID, admin := s.User(t, "admin@example.com", "admin")

	var ada userBody
	status, raw := call(t, s, admin, "POST", "/api/users",
		map[string]string{"name": " Ada Lovelace ", "email": "Ada@Example.com", "role": "editor", "password": "correct horse"})
	if status != http.StatusOK || strings.Contains(string(raw), "password") || strings.Contains(string(raw), "argon2") {
		t.Fatalf("create user = %d %s", status, raw)
	}
	if err := json.Unmarshal(raw, &ada); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(userBody{ID: ada.ID, Name: "Ada Lovelace", Email: "Ada@Example.com", Role: "editor"}, ada); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}
	// The password is stored as argon2id and works for login.
	var hash string
	if err := s.DB(t).QueryRow(context.Background(), `SELECT password_hash FROM users WHERE id = $1`, ada.ID).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$") {
		t.Errorf("password hash %q is not argon2id", hash)
	}
	if r := login(t, s, "ada@example.com", "correct horse"); r.status != http.StatusOK {
		t.Errorf("login as the new user = %d %v", r.status, r.body)
	}

	// The email is unique regardless of case: 409 with the body {error}.
	status, raw = call(t, s, admin, "POST", "/api/users",
		map[string]string{"name": "Imposter", "email": "ADA@example.COM", "role": "viewer", "password": "long enough"})
	var dup map[string]any
	if err := json.Unmarshal(raw, &dup); err != nil || status != http.StatusConflict {
		t.Fatalf("duplicate email = %d %s", status, raw)
	}
	if msg, ok := dup["error"].(string); !ok || msg == "" || len(dup) != 1 {
		t.Errorf("duplicate email body = %s, want exactly {error}", raw)
	}
	for name, body := range map[string]map[string]string{
		"password of 7":  {"name": "X", "email": "x1@example.com", "role": "viewer", "password": "1234567"},
		"unknown role":   {"name": "X", "email": "x2@example.com", "role": "owner", "password": "long enough"},
		"invalid email":  {"name": "X", "email": "x3", "role": "viewer", "password": "long enough"},
		"blank name":     {"name": "  ", "email": "x4@example.com", "role": "viewer", "password": "long enough"},
		"missing fields": {"email": "x5@example.com"},
	} {
		if status, raw := call(t, s, admin, "POST", "/api/users", body); status != http.StatusUnprocessableEntity {
			t.Errorf("create with %s = %d %s, want 422", name, status, raw)
		}
	}

	var list []userBody
	must(t, s, admin, "GET", "/api/users", nil, http.StatusOK, &list)
	want := []userBody{ // newest first
		{ID: ada.ID, Name: "Ada Lovelace", Email: "Ada@Example.com", Role: "editor"},
		{ID: adminID, Name: "admin@example.com", Email: "admin@example.com", Role: "admin"},
	}
	if d := cmp.Diff(want, list); d != "" {
		t.Errorf("users (-want +got):\n%s", d)
	}

	// PATCH (an extension) changes name and role; the new role applies at once.
	var upd userBody
	must(t, s, admin, "PATCH", "/api/users/"+itoa(ada.ID), map[string]string{"role": "admin"}, http.StatusOK, &upd)
	if upd.Role != "admin" || upd.Name != "Ada Lovelace" {
		t.Errorf("promoted = %+v", upd)
	}
	adaToken := s.Token(t, ada.ID, "read_write", nil)
	must(t, s, adaToken, "GET", "/api/users", nil, http.StatusOK, nil)
	must(t, s, admin, "PATCH", "/api/users/"+itoa(ada.ID), map[string]string{"name": "Ada King", "role": "viewer"}, http.StatusOK, &upd)
	if upd.Role != "viewer" || upd.Name != "Ada King" {
		t.Errorf("demoted = %+v", upd)
	}
	must(t, s, adaToken, "GET", "/api/users", nil, http.StatusForbidden, nil)
	must(t, s, admin, "PATCH", "/api/users/987654", map[string]string{"name": "X"}, http.StatusNotFound, nil)
	must(t, s, admin, "PATCH", "/api/users/"+itoa(ada.ID), map[string]string{"name": ""}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "PATCH", "/api/users/"+itoa(ada.ID), map[string]string{"role": "root"}, http.StatusUnprocessableEntity, nil)
	// The last admin cannot be demoted, not even by themself.
	must(t, s, admin, "PATCH", "/api/users/"+itoa(adminID), map[string]string{"role": "editor"}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "PATCH", "/api/users/"+itoa(adminID), map[string]string{"role": "admin", "name": "Root"}, http.StatusOK, nil)
}

// Deleting a user cascades to their sessions, tokens and memberships; nobody
// deletes themself, and the last admin stays.
func TestDeleteUser(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	adminID, admin := s.User(t, "admin@example.com", "admin")
	adaID, adaToken := s.User(t, "ada@example.com", "editor")
	projectID, _ := s.DefaultProject(t)
	s.Member(t, projectID, adaID, "admin")
	session := login(t, s, "ada@example.com", "password123")
	if session.cookie == nil {
		t.Fatalf("login = %d %v", session.status, session.body)
	}

	must(t, s, admin, "DELETE", "/api/users/"+itoa(adminID), nil, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "DELETE", "/api/users/987654", nil, http.StatusNotFound, nil)
	must(t, s, admin, "DELETE", "/api/users/"+itoa(adaID), nil, http.StatusNoContent, nil)
	must(t, s, adaToken, "GET", "/api/tokens", nil, http.StatusUnauthorized, nil)
	if status, _, _ := s.Do(t, apptest.Request{Method: "GET", Path: "/api/auth/me", Cookie: session.cookie}); status != http.StatusUnauthorized {
		t.Errorf("deleted user's session = %d, want 401", status)
	}
	var left int
	if err := s.DB(t).QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM sessions WHERE user_id = $1) + (SELECT count(*) FROM personal_access_tokens WHERE user_id = $1)
		      + (SELECT count(*) FROM project_members WHERE user_id = $1)`, adaID).Scan(&left); err != nil || left != 0 {
		t.Errorf("rows left of the deleted user: %d (%v)", left, err)
	}
	must(t, s, admin, "DELETE", "/api/users/"+itoa(adaID), nil, http.StatusNotFound, nil)
}

// docs/reference/identity.md, Invariants: one admin always remains. Two admins
// removing each other at once: exactly one succeeds. The other is refused: 422
// when its request was authenticated before the first committed, 401 (deleted)
// or 403 (demoted) when after.
func TestLastAdminConcurrently(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	s.DB(t) // open the pool for the whole test, not only the first subtest
	cases := []struct {
		name   string
		method string
		body   any
		ok     int
	}{
		{"delete each other", "DELETE", nil, http.StatusNoContent},
		{"demote each other", "PATCH", map[string]string{"role": "viewer"}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			aID, a := s.User(t, uniq("a")+"@example.com", "admin")
			bID, b := s.User(t, uniq("b")+"@example.com", "admin")
			// Leave exactly these two admins.
			if _, err := s.DB(t).Exec(context.Background(), `UPDATE users SET role = 'viewer' WHERE id <> $1 AND id <> $2`, aID, bID); err != nil {
				t.Fatal(err)
			}
			statuses := concurrently(
				func() int { return send(t, s, a, c.method, "/api/users/"+itoa(bID), c.body) },
				func() int { return send(t, s, b, c.method, "/api/users/"+itoa(aID), c.body) },
			)
			refused := count(statuses, http.StatusUnprocessableEntity) + count(statuses, http.StatusUnauthorized) + count(statuses, http.StatusForbidden)
			if count(statuses, c.ok) != 1 || refused != 1 {
				t.Errorf("answered %v, want one %d and one refusal", statuses, c.ok)
			}
			var admins int
			if err := s.DB(t).QueryRow(context.Background(), `SELECT count(*) FROM users WHERE role = 'admin'`).Scan(&admins); err != nil || admins != 1 {
				t.Errorf("%d admins left (%v), want 1", admins, err)
			}
		})
	}
}
