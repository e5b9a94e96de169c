package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

func TestEnvironmentCreateAndUpdate(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	other := newProject(t, s, admin)
	envs := "/api/projects/" + p.ID.String() + "/environments"

	var qa, ci environmentBody
	must(t, s, admin, "POST", envs, map[string]string{"name": "QA", "slug": "qa"}, http.StatusOK, &qa)
	if d := cmp.Diff(environmentBody{ID: qa.ID, ProjectID: p.ID, Name: "QA", Slug: "qa", Color: "#6366f1"}, qa); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}
	must(t, s, admin, "POST", envs, map[string]string{"name": "CI", "slug": "ci-1", "color": "#ABC"}, http.StatusOK, &ci)
	if ci.Color != "#ABC" || ci.IsDefault || ci.RequireApproval {
		t.Errorf("created = %+v", ci)
	}
	// Slugs are unique per project, not across projects.
	must(t, s, admin, "POST", envs, map[string]string{"name": "QA again", "slug": "qa"}, http.StatusConflict, nil)
	must(t, s, admin, "POST", "/api/projects/"+other.ID.String()+"/environments", map[string]string{"name": "QA", "slug": "qa"}, http.StatusOK, nil)
	for name, body := range map[string]map[string]string{
		"uppercase slug": {"name": "X", "slug": "QA2"},
		"slug too long":  {"name": "X", "slug": strings.Repeat("a", 65)},
		"name too long":  {"name": strings.Repeat("n", 101), "slug": "long"},
		"blank name":     {"name": "   ", "slug": "blank"},
		"bad color":      {"name": "X", "slug": "x", "color": "#12345"},
		"missing slug":   {"name": "X"},
	} {
		if status, raw := call(t, s, admin, "POST", envs, body); status != http.StatusUnprocessableEntity {
			t.Errorf("create with %s = %d %s, want 422", name, status, raw)
		}
	}
	must(t, s, admin, "POST", "/api/projects/"+uuid.NewString()+"/environments", map[string]string{"name": "X", "slug": "x"}, http.StatusNotFound, nil)

	var list []environmentBody
	must(t, s, admin, "GET", envs, nil, http.StatusOK, &list)
	var slugs []string
	for _, e := range list {
		slugs = append(slugs, e.Slug)
	}
	if d := cmp.Diff([]string{"ci-1", "qa", "development", "staging", "production"}, slugs); d != "" {
		t.Errorf("environments, newest first (-want +got):\n%s", d)
	}

	var upd environmentBody
	must(t, s, admin, "PATCH", envs+"/"+qa.ID.String(), map[string]string{"name": "Quality"}, http.StatusOK, &upd)
	if upd.Name != "Quality" || upd.Color != "#6366f1" || upd.Slug != "qa" {
		t.Errorf("renamed = %+v", upd)
	}
	must(t, s, admin, "PATCH", envs+"/"+qa.ID.String(), map[string]string{"color": "#00ff00"}, http.StatusOK, &upd)
	if upd.Name != "Quality" || upd.Color != "#00ff00" {
		t.Errorf("recolored = %+v", upd)
	}
	must(t, s, admin, "PATCH", envs+"/"+qa.ID.String(), map[string]string{}, http.StatusOK, &upd)
	if upd.Name != "Quality" || upd.Color != "#00ff00" {
		t.Errorf("empty patch changed %+v", upd)
	}
	must(t, s, admin, "PATCH", envs+"/"+qa.ID.String(), map[string]string{"color": "green"}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "PATCH", envs+"/"+qa.ID.String(), map[string]string{"name": " "}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "PATCH", envs+"/"+uuid.NewString(), map[string]string{"name": "X"}, http.StatusNotFound, nil)
	// An environment of another project is not found under this one.
	otherEnv := other.envBySlug(t, "staging")
	for _, r := range []struct{ method, path string }{
		{"PATCH", envs + "/" + otherEnv.String()},
		{"DELETE", envs + "/" + otherEnv.String()},
		{"POST", envs + "/" + otherEnv.String() + "/default"},
		{"POST", envs + "/" + otherEnv.String() + "/require-approval"},
	} {
		var body any
		if r.method == "PATCH" {
			body = map[string]string{"name": "X"}
		} else if strings.HasSuffix(r.path, "approval") {
			body = map[string]bool{"require_approval": true}
		}
		if status, raw := call(t, s, admin, r.method, r.path, body); status != http.StatusNotFound {
			t.Errorf("%s %s with another project's environment = %d %s, want 404", r.method, r.path, status, raw)
		}
	}
}

func TestEnvironmentDefaultAndApproval(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	envs := "/api/projects/" + p.ID.String() + "/environments"
	staging := p.envBySlug(t, "staging")

	var e environmentBody
	must(t, s, admin, "POST", envs+"/"+staging.String()+"/default", nil, http.StatusOK, &e)
	if !e.IsDefault || e.ID != staging {
		t.Errorf("set default = %+v", e)
	}
	must(t, s, admin, "POST", envs+"/"+staging.String()+"/default", nil, http.StatusOK, &e) // idempotent
	assertOneDefault(t, s, admin, p.ID, staging)
	must(t, s, admin, "POST", envs+"/"+uuid.NewString()+"/default", nil, http.StatusNotFound, nil)

	must(t, s, admin, "POST", envs+"/"+staging.String()+"/require-approval", map[string]bool{"require_approval": true}, http.StatusOK, &e)
	if !e.RequireApproval {
		t.Errorf("require approval on = %+v", e)
	}
	var listed []projectBody
	must(t, s, admin, "GET", "/api/projects", nil, http.StatusOK, &listed)
	found := false
	for _, got := range listed {
		if got.ID != p.ID {
			continue
		}
		found = true
		for _, summary := range got.Environments {
			if summary.RequireApproval != (summary.ID == staging) {
				t.Errorf("project summary of %s: require_approval = %v", summary.Slug, summary.RequireApproval)
			}
		}
	}
	if !found {
		t.Errorf("project %s missing from the list", p.ID)
	}
	must(t, s, admin, "POST", envs+"/"+staging.String()+"/require-approval", map[string]bool{"require_approval": false}, http.StatusOK, &e)
	if e.RequireApproval {
		t.Errorf("require approval off = %+v", e)
	}
	must(t, s, admin, "POST", envs+"/"+staging.String()+"/require-approval", map[string]string{"require_approval": "yes"}, http.StatusUnprocessableEntity, nil)
	must(t, s, admin, "POST", envs+"/"+staging.String()+"/require-approval", map[string]bool{}, http.StatusUnprocessableEntity, nil)
}

// assertOneDefault checks that exactly one environment of a project is the
// default, and that it is want.
func assertOneDefault(t *testing.T, s *apptest.Server, admin string, project, want uuid.UUID) {
	t.Helper()
	var list []environmentBody
	must(t, s, admin, "GET", "/api/projects/"+project.String()+"/environments", nil, http.StatusOK, &list)
	var defaults []uuid.UUID
	for _, e := range list {
		if e.IsDefault {
			defaults = append(defaults, e.ID)
		}
	}
	if len(defaults) != 1 || (want != uuid.Nil && defaults[0] != want) {
		t.Errorf("defaults = %v, want exactly [%v]", defaults, want)
	}
}

// docs/reference/identity.md, Invariants: the default environment, the last
// environment and the one holding the project's last server keys cannot be
// deleted.
func TestDeleteEnvironment(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	envs := "/api/projects/" + p.ID.String() + "/environments/"
	prod, staging, dev := p.envBySlug(t, "production"), p.envBySlug(t, "staging"), p.envBySlug(t, "development")

	must(t, s, admin, "DELETE", envs+dev.String(), nil, http.StatusUnprocessableEntity, nil)  // default
	must(t, s, admin, "DELETE", envs+prod.String(), nil, http.StatusUnprocessableEntity, nil) // holds the only key
	if _, err := s.DB(t).Exec(context.Background(),
		`INSERT INTO audit_entries (environment_id, flag_key, actor_email, action) VALUES ($1, 'f', 'a@example.com', 'create')`, staging); err != nil {
		t.Fatal(err)
	}
	must(t, s, admin, "DELETE", envs+staging.String(), nil, http.StatusNoContent, nil)       // fine, audit log and all
	must(t, s, admin, "DELETE", envs+staging.String(), nil, http.StatusNotFound, nil)        // gone
	must(t, s, admin, "DELETE", envs+uuid.NewString(), nil, http.StatusNotFound, nil)        // never was
	devKey := newKey(t, s, admin, p.ID, dev)                                                 // a key elsewhere
	must(t, s, admin, "DELETE", envs+prod.String(), nil, http.StatusNoContent, nil)          // now possible
	must(t, s, admin, "DELETE", envs+dev.String(), nil, http.StatusUnprocessableEntity, nil) // last (and default)
	if sdkKeyWorks(t, s, p.SDKKey.Key, prod) {
		t.Error("the SDK key of the deleted Production environment still works")
	}
	if !sdkKeyWorks(t, s, devKey.Key, dev) {
		t.Error("the Development key stopped working")
	}
	var got projectBody
	must(t, s, admin, "PATCH", "/api/projects/"+p.ID.String(), map[string]string{"name": p.Name}, http.StatusOK, &got)
	if got.EnvironmentCount != 1 || len(got.Environments) != 1 || got.Environments[0].ID != dev {
		t.Errorf("project after deletions = %+v", got)
	}

	// A former default can be deleted once it is no longer the default.
	q := newEnv(t, s, admin, p.ID)
	must(t, s, admin, "POST", envs+q.ID.String()+"/default", nil, http.StatusOK, nil)
	must(t, s, admin, "DELETE", envs+dev.String(), nil, http.StatusUnprocessableEntity, nil) // still holds the only key
	newKey(t, s, admin, p.ID, q.ID)
	must(t, s, admin, "DELETE", envs+dev.String(), nil, http.StatusNoContent, nil)
	assertOneDefault(t, s, admin, p.ID, q.ID)
}

// Exactly one default per project, even when several environments are made
// the default at once.
func TestSetDefaultEnvironmentConcurrently(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	var fns []func() int
	for range 4 {
		e := newEnv(t, s, admin, p.ID)
		fns = append(fns, func() int {
			return send(t, s, admin, "POST", "/api/projects/"+p.ID.String()+"/environments/"+e.ID.String()+"/default", nil)
		})
	}
	for _, e := range p.Environments {
		fns = append(fns, func() int {
			return send(t, s, admin, "POST", "/api/projects/"+p.ID.String()+"/environments/"+e.ID.String()+"/default", nil)
		})
	}
	statuses := concurrently(fns...)
	if count(statuses, http.StatusOK) != len(fns) {
		t.Errorf("concurrent set-default answered %v, want all 200", statuses)
	}
	assertOneDefault(t, s, admin, p.ID, uuid.Nil)
}

// Deleting environments never cascades away a project's last SDK key or
// default, also when the deletes, revocations and default changes race.
func TestEnvironmentInvariantsConcurrently(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	envPath := func(p projectBody, id uuid.UUID) string {
		return "/api/projects/" + p.ID.String() + "/environments/" + id.String()
	}

	t.Run("two environments holding the only two keys", func(t *testing.T) {
		p := newProject(t, s, admin)
		prod, staging := p.envBySlug(t, "production"), p.envBySlug(t, "staging")
		newKey(t, s, admin, p.ID, staging)
		statuses := concurrently(
			func() int { return send(t, s, admin, "DELETE", envPath(p, prod), nil) },
			func() int { return send(t, s, admin, "DELETE", envPath(p, staging), nil) },
		)
		if count(statuses, http.StatusNoContent) != 1 || count(statuses, http.StatusUnprocessableEntity) != 1 {
			t.Errorf("deletes answered %v, want one 204 and one 422", statuses)
		}
		assertKeys(t, s, admin, p.ID, 1)
	})

	t.Run("an environment deleted while the other key is revoked", func(t *testing.T) {
		p := newProject(t, s, admin)
		staging := p.envBySlug(t, "staging")
		newKey(t, s, admin, p.ID, staging)
		statuses := concurrently(
			func() int { return send(t, s, admin, "DELETE", envPath(p, staging), nil) },
			func() int {
				return send(t, s, admin, "DELETE", "/api/projects/"+p.ID.String()+"/keys/"+itoa(p.SDKKey.ID), nil)
			},
		)
		if count(statuses, http.StatusNoContent) != 1 || count(statuses, http.StatusUnprocessableEntity) != 1 {
			t.Errorf("delete and revoke answered %v, want one 204 and one 422", statuses)
		}
		assertKeys(t, s, admin, p.ID, 1)
	})

	t.Run("an environment deleted while it becomes the default", func(t *testing.T) {
		p := newProject(t, s, admin)
		staging := p.envBySlug(t, "staging")
		statuses := concurrently(
			func() int { return send(t, s, admin, "DELETE", envPath(p, staging), nil) },
			func() int { return send(t, s, admin, "POST", envPath(p, staging)+"/default", nil) },
		)
		// Either the delete went first (204, then the default is not found)
		// or the default moved first (200, then the delete is refused).
		ok := (statuses[0] == http.StatusNoContent && statuses[1] == http.StatusNotFound) ||
			(statuses[0] == http.StatusUnprocessableEntity && statuses[1] == http.StatusOK)
		if !ok {
			t.Errorf("delete and set-default answered %v", statuses)
		}
		assertOneDefault(t, s, admin, p.ID, uuid.Nil)
	})
}

// assertKeys checks how many SDK keys a project has.
func assertKeys(t *testing.T, s *apptest.Server, admin string, project uuid.UUID, want int) {
	t.Helper()
	var keys []sdkKeyBody
	must(t, s, admin, "GET", "/api/projects/"+project.String()+"/keys", nil, http.StatusOK, &keys)
	if len(keys) != want {
		t.Errorf("project has %d SDK keys, want %d", len(keys), want)
	}
}
