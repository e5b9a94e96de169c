package app_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

func TestMembers(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	aliceID, alice := s.User(t, "alice@example.com", "viewer")
	bobID, _ := s.User(t, "bob@example.com", "editor")
	p := newProject(t, s, admin)
	members := "/api/projects/" + p.ID.String() + "/members"
	member := func(id int64) string { return members + "/" + strconv.FormatInt(id, 10) }

	var got memberBody
	must(t, s, admin, "POST", members, map[string]any{"user_id": aliceID, "role": "viewer"}, http.StatusOK, &got)
	if d := cmp.Diff(memberBody{UserID: aliceID, Name: "alice@example.com", Email: "alice@example.com", Role: "viewer"}, got); d != "" {
		t.Errorf("added member (-want +got):\n%s", d)
	}
	// Membership makes the project visible; viewer is read-only.
	var mine []projectBody
	must(t, s, alice, "GET", "/api/projects", nil, http.StatusOK, &mine)
	if len(mine) != 1 || mine[0].ID != p.ID || mine[0].MemberCount != 1 {
		t.Errorf("alice's projects = %+v, want the one project with one member", mine)
	}
	must(t, s, alice, "GET", members, nil, http.StatusForbidden, nil)

	must(t, s, admin, "POST", members, map[string]any{"user_id": aliceID, "role": "admin"}, http.StatusConflict, nil)
	must(t, s, admin, "POST", members, map[string]any{"user_id": 987654, "role": "viewer"}, http.StatusNotFound, nil)
	must(t, s, admin, "POST", members, map[string]any{"user_id": bobID, "role": "owner"}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "POST", members, map[string]any{"user_id": bobID, "role": "editor"}, http.StatusOK, nil)

	// Promoted to project admin, alice manages members at once.
	must(t, s, admin, "PATCH", member(aliceID), map[string]string{"role": "admin"}, http.StatusOK, &got)
	if got.Role != "admin" || got.Email != "alice@example.com" {
		t.Errorf("updated member = %+v", got)
	}
	var list []memberBody
	must(t, s, alice, "GET", members, nil, http.StatusOK, &list)
	want := []memberBody{ // newest first
		{UserID: bobID, Name: "bob@example.com", Email: "bob@example.com", Role: "editor"},
		{UserID: aliceID, Name: "alice@example.com", Email: "alice@example.com", Role: "admin"},
	}
	if d := cmp.Diff(want, list); d != "" {
		t.Errorf("members (-want +got):\n%s", d)
	}
	must(t, s, admin, "PATCH", member(987654), map[string]string{"role": "admin"}, http.StatusNotFound, nil)
	must(t, s, admin, "PATCH", member(aliceID), map[string]string{"role": "root"}, http.StatusUnprocessableEntity, nil)

	// Removing revokes access; the account stays.
	must(t, s, alice, "DELETE", member(bobID), nil, http.StatusNoContent, nil)
	must(t, s, admin, "DELETE", member(bobID), nil, http.StatusNotFound, nil)
	must(t, s, admin, "DELETE", member(aliceID), nil, http.StatusNoContent, nil)
	must(t, s, alice, "GET", members, nil, http.StatusNotFound, nil)
	must(t, s, alice, "GET", "/api/projects", nil, http.StatusOK, &mine)
	if len(mine) != 0 {
		t.Errorf("a removed member still sees %d projects", len(mine))
	}
	var users []userBody
	must(t, s, admin, "GET", "/api/users", nil, http.StatusOK, &users)
	if len(users) != 3 {
		t.Errorf("%d users after removing members, want 3 (accounts kept)", len(users))
	}
}

// docs/reference/identity.md, Roles: project roles are independent across
// projects.
func TestMemberRolesIndependentAcrossProjects(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	aliceID, alice := s.User(t, "alice@example.com", "viewer")
	one := newProject(t, s, admin)
	two := newProject(t, s, admin)
	s.Member(t, one.ID, aliceID, "admin")
	s.Member(t, two.ID, aliceID, "viewer")

	must(t, s, alice, "GET", "/api/projects/"+one.ID.String()+"/members", nil, http.StatusOK, nil)
	must(t, s, alice, "GET", "/api/projects/"+two.ID.String()+"/members", nil, http.StatusForbidden, nil)
	must(t, s, alice, "POST", "/api/projects/"+one.ID.String()+"/environments", map[string]string{"name": "QA", "slug": "qa"}, http.StatusOK, nil)
	must(t, s, alice, "POST", "/api/projects/"+two.ID.String()+"/environments", map[string]string{"name": "QA", "slug": "qa"}, http.StatusForbidden, nil)
	// Raising the role in one project leaves the other alone.
	must(t, s, admin, "PATCH", "/api/projects/"+one.ID.String()+"/members/"+strconv.FormatInt(aliceID, 10), map[string]string{"role": "viewer"}, http.StatusOK, nil)
	must(t, s, admin, "PATCH", "/api/projects/"+two.ID.String()+"/members/"+strconv.FormatInt(aliceID, 10), map[string]string{"role": "admin"}, http.StatusOK, nil)
	must(t, s, alice, "GET", "/api/projects/"+one.ID.String()+"/members", nil, http.StatusForbidden, nil)
	must(t, s, alice, "GET", "/api/projects/"+two.ID.String()+"/members", nil, http.StatusOK, nil)
}
