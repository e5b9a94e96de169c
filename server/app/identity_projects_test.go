package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// Creating a project seeds Production, Staging and Development (the default)
// and one Production SDK key, shown in full only in the answer.
func TestCreateProjectSeeds(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")

	var p projectBody
	must(t, s, admin, "POST", "/api/projects", map[string]string{"name": "Mobile App"}, http.StatusOK, &p)
	if p.Name != "Mobile App" || p.Slug != "mobile-app" || p.EnvironmentCount != 3 || p.MemberCount != 0 {
		t.Errorf("project = %+v, want Mobile App / mobile-app with 3 environments and 0 members", p)
	}
	var got []envSummary
	for _, e := range p.Environments {
		e.ID = uuid.Nil
		got = append(got, e)
	}
	want := []envSummary{ // default first, then newest first
		{Name: "Development", Slug: "development", Color: "#22c55e", IsDefault: true},
		{Name: "Staging", Slug: "staging", Color: "#f59e0b"},
		{Name: "Production", Slug: "production", Color: "#ef4444"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("environments (-want +got):\n%s", d)
	}
	k := p.SDKKey
	if k == nil {
		t.Fatal("the answer carries no sdk_key")
	}
	if !strings.HasPrefix(k.Key, "sk_live_") || k.Prefix != k.Key[:12] ||
		k.EnvironmentID != p.envBySlug(t, "production") || k.EnvironmentName != "Production" {
		t.Errorf("sdk_key = %+v, want a full sk_live_ key of Production with its 12-character prefix", k)
	}
	if !sdkKeyWorks(t, s, k.Key, k.EnvironmentID) {
		t.Error("the created SDK key is not accepted")
	}

	// The key is listed by prefix only, and the project's listing carries no key.
	var keys []map[string]any
	must(t, s, admin, "GET", "/api/projects/"+p.ID.String()+"/keys", nil, http.StatusOK, &keys)
	if len(keys) != 1 || keys[0]["prefix"] != k.Prefix || keys[0]["key"] != nil {
		t.Errorf("keys = %v, want the one key by prefix only", keys)
	}
	status, raw := call(t, s, admin, "GET", "/api/projects", nil)
	if status != http.StatusOK || strings.Contains(string(raw), k.Key) || strings.Contains(string(raw), `"sdk_key"`) {
		t.Errorf("list projects = %d %s, want no key in it", status, raw)
	}
}

// docs/reference/identity.md, Projects and environments: a slug is lowercase
// ASCII, every run of other characters one hyphen, trimmed of hyphens; a
// name without ASCII letters or digits is 422.
func TestProjectSlugs(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	cases := []struct {
		name, slug string
		status     int
	}{
		{"Mobile App", "mobile-app", 200},
		{"  Hello,   World!! ", "hello-world", 200},
		{"--Edge--Case--", "edge-case", 200},
		{"ABC 123", "abc-123", 200},
		{"Café Ünïcode", "caf-n-code", 200},
		{"\u212Aelvin", "elvin", 200}, // the Kelvin sign is not an ASCII K
		{"snake_case.name", "snake-case-name", 200},
		{"日本語", "", 422},
		{"!!!", "", 422},
		{"   ", "", 422},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, raw := call(t, s, admin, "POST", "/api/projects", map[string]string{"name": c.name})
			if status != c.status {
				t.Fatalf("create %q = %d %s, want %d", c.name, status, raw, c.status)
			}
			var p projectBody
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			if status == 200 && p.Slug != c.slug {
				t.Errorf("slug of %q = %q, want %q", c.name, p.Slug, c.slug)
			}
		})
	}
}

func TestProjectConflictsAndRename(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	var a, b projectBody
	must(t, s, admin, "POST", "/api/projects", map[string]string{"name": "Alpha"}, http.StatusOK, &a)
	must(t, s, admin, "POST", "/api/projects", map[string]string{"name": "Beta"}, http.StatusOK, &b)

	var e errorBody
	must(t, s, admin, "POST", "/api/projects", map[string]string{"name": "ALPHA!"}, http.StatusConflict, &e)
	if e.Error == "" {
		t.Error("409 without an error message")
	}

	var renamed projectBody
	must(t, s, admin, "PATCH", "/api/projects/"+a.ID.String(), map[string]string{"name": "Alpha Two"}, http.StatusOK, &renamed)
	if renamed.ID != a.ID || renamed.Name != "Alpha Two" || renamed.Slug != "alpha-two" ||
		renamed.EnvironmentCount != 3 || len(renamed.Environments) != 3 || renamed.SDKKey != nil {
		t.Errorf("renamed = %+v", renamed)
	}
	// The old slug is free again; renaming onto another project's slug is 409.
	must(t, s, admin, "POST", "/api/projects", map[string]string{"name": "alpha"}, http.StatusOK, nil)
	must(t, s, admin, "PATCH", "/api/projects/"+a.ID.String(), map[string]string{"name": "beta"}, http.StatusConflict, nil)
	must(t, s, admin, "PATCH", "/api/projects/"+a.ID.String(), map[string]string{"name": "Alpha Two"}, http.StatusOK, nil)
	must(t, s, admin, "PATCH", "/api/projects/"+a.ID.String(), map[string]string{"name": "***"}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "PATCH", "/api/projects/"+a.ID.String(), map[string]string{"name": ""}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "PATCH", "/api/projects/"+uuid.NewString(), map[string]string{"name": "Gamma"}, http.StatusNotFound, nil)
	must(t, s, admin, "PATCH", "/api/projects/"+a.ID.String(), `{"name":`, http.StatusBadRequest, nil)
}

// Workspace admins see every project; others only their member projects,
// newest first, with live counts.
func TestListProjects(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	aliceID, alice := s.User(t, "alice@example.com", "editor")
	bobID, _ := s.User(t, "bob@example.com", "viewer")
	defaultID, _ := s.DefaultProject(t)
	one := newProject(t, s, admin)
	two := newProject(t, s, admin)
	s.Member(t, one.ID, aliceID, "viewer")
	s.Member(t, two.ID, aliceID, "admin")
	s.Member(t, two.ID, bobID, "editor")
	newEnv(t, s, admin, two.ID)

	ids := func(ps []projectBody) []uuid.UUID {
		out := []uuid.UUID{}
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	var all, mine []projectBody
	must(t, s, admin, "GET", "/api/projects", nil, http.StatusOK, &all)
	if d := cmp.Diff([]uuid.UUID{two.ID, one.ID, defaultID}, ids(all)); d != "" {
		t.Errorf("admin's projects (-want +got):\n%s", d)
	}
	must(t, s, alice, "GET", "/api/projects", nil, http.StatusOK, &mine)
	if d := cmp.Diff([]uuid.UUID{two.ID, one.ID}, ids(mine)); d != "" {
		t.Errorf("member's projects (-want +got):\n%s", d)
	}
	if mine[0].MemberCount != 2 || mine[0].EnvironmentCount != 4 || len(mine[0].Environments) != 4 ||
		mine[1].MemberCount != 1 || mine[1].EnvironmentCount != 3 {
		t.Errorf("counts = %+v", mine)
	}
	if !mine[0].Environments[0].IsDefault {
		t.Errorf("environments of %s do not start with the default: %+v", mine[0].Slug, mine[0].Environments)
	}
	_, nobody := s.User(t, "nobody@example.com", "editor")
	var none []projectBody
	must(t, s, nobody, "GET", "/api/projects", nil, http.StatusOK, &none)
	if len(none) != 0 {
		t.Errorf("a user without memberships sees %d projects", len(none))
	}
}

// Deleting a project cascades to its environments, SDK keys and members; the
// last project cannot be deleted.
func TestDeleteProject(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	aliceID, alice := s.User(t, "alice@example.com", "editor")
	defaultID, _ := s.DefaultProject(t)
	p := newProject(t, s, admin)
	s.Member(t, p.ID, aliceID, "admin")
	prod := p.envBySlug(t, "production")
	// The cascade also removes the append-only audit log of its environments.
	if _, err := s.DB(t).Exec(context.Background(),
		`INSERT INTO audit_entries (environment_id, flag_key, actor_email, action) VALUES ($1, 'f', 'a@example.com', 'create')`, prod); err != nil {
		t.Fatal(err)
	}

	must(t, s, admin, "DELETE", "/api/projects/"+p.ID.String(), nil, http.StatusNoContent, nil)
	if sdkKeyWorks(t, s, p.SDKKey.Key, prod) {
		t.Error("the deleted project's SDK key still works")
	}
	must(t, s, alice, "GET", "/api/projects/"+p.ID.String()+"/members", nil, http.StatusNotFound, nil)
	must(t, s, admin, "DELETE", "/api/projects/"+p.ID.String(), nil, http.StatusNotFound, nil)
	var n int
	if err := s.DB(t).QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM environments WHERE project_id = $1) + (SELECT count(*) FROM project_members WHERE project_id = $1)`,
		p.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows left of the deleted project: %d (%v)", n, err)
	}
	var e errorBody
	must(t, s, admin, "DELETE", "/api/projects/"+defaultID.String(), nil, http.StatusUnprocessableEntity, &e)
	if e.Error == "" {
		t.Error("422 without an error message")
	}
}

// docs/reference/identity.md, Invariants: at least one project remains, even
// when every project is deleted at once: exactly all but one of the deletes
// succeed.
func TestDeleteProjectsConcurrently(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	for _, n := range []int{2, 5} {
		var projects []projectBody
		must(t, s, admin, "GET", "/api/projects", nil, http.StatusOK, &projects)
		for len(projects) < n {
			projects = append(projects, newProject(t, s, admin))
		}
		var fns []func() int
		for _, p := range projects {
			fns = append(fns, func() int { return send(t, s, admin, "DELETE", "/api/projects/"+p.ID.String(), nil) })
		}
		statuses := concurrently(fns...)
		if count(statuses, http.StatusNoContent) != n-1 || count(statuses, http.StatusUnprocessableEntity) != 1 {
			t.Errorf("deleting all %d projects at once answered %v, want %d × 204 and one 422", n, statuses, n-1)
		}
		var left []projectBody
		must(t, s, admin, "GET", "/api/projects", nil, http.StatusOK, &left)
		if len(left) != 1 {
			t.Errorf("%d projects left, want 1", len(left))
		}
	}
}
