package app_test

// The audit trail of identity's writes (docs/audit.md): projects,
// environments, SDK keys, members, users, personal access tokens, the
// workspace, the first boot, sign-ins, lockouts and the setup wizard, each
// an entry by the right actor with the resource as the API shows it and
// never a secret.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// idAuditRaw returns the body of GET /api/audit: every entry of these tests'
// instances fits one page.
func idAuditRaw(t *testing.T, s *apptest.Server, bearer string) string {
	t.Helper()
	status, raw := call(t, s, bearer, http.MethodGet, "/api/audit?limit=500", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /api/audit = %d %s", status, raw)
	}
	var page struct {
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || page.NextCursor != nil {
		t.Fatalf("GET /api/audit: more than one page (%v)", err)
	}
	return string(raw)
}

// idAuditNoSecrets fails the test when the trail holds any of secrets, or
// anything of a stored password.
func idAuditNoSecrets(t *testing.T, s *apptest.Server, bearer string, secrets ...string) {
	t.Helper()
	raw := idAuditRaw(t, s, bearer)
	for _, secret := range append(secrets, "$argon2", "password_hash", "key_hash", "token_hash") {
		if secret != "" && strings.Contains(raw, secret) {
			t.Errorf("the trail holds the secret %q", secret)
		}
	}
}

// idAuditLatest returns the newest entry with action for resource id.
func idAuditLatest(t *testing.T, s *apptest.Server, bearer, action, id string) trailEntry {
	t.Helper()
	return trailFind(t, trail(t, s, bearer, "action="+action), action, id)
}

// idAuditItem returns the item of the list GET path answers whose field
// has value, as the API encodes it.
func idAuditItem(t *testing.T, s *apptest.Server, bearer, path, field string, value any) map[string]any {
	t.Helper()
	var items []map[string]any
	must(t, s, bearer, http.MethodGet, path, nil, http.StatusOK, &items)
	for _, it := range items {
		if fmt.Sprint(it[field]) == fmt.Sprint(value) {
			return it
		}
	}
	t.Fatalf("GET %s has no item with %s %v", path, field, value)
	return nil
}

// idAuditUTC rewrites every timestamp field (*_at) of a decoded value as the
// same instant in UTC, so that states compare by instant.
func idAuditUTC(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && strings.HasSuffix(k, "_at") {
				if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
					v[k] = at.UTC().Format(time.RFC3339Nano)
					continue
				}
			}
			v[k] = idAuditUTC(x)
		}
	case []any:
		for i, x := range v {
			v[i] = idAuditUTC(x)
		}
	}
	return v
}

// idAuditSame fails the test unless an entry's state is want (a value the
// API answered, or nil for none).
func idAuditSame(t *testing.T, what string, got json.RawMessage, want any) {
	t.Helper()
	var g, w any
	if len(got) > 0 {
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
	}
	if want != nil {
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(idAuditUTC(w), idAuditUTC(g)); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// idAuditByToken fails the test unless e's actor is email's personal access
// token token, named by its prefix.
func idAuditByToken(t *testing.T, e trailEntry, email, token string) {
	t.Helper()
	a := e.Actor
	if a.Kind != "token" || a.Email == nil || *a.Email != email || a.Label == nil || !strings.HasPrefix(token, *a.Label) || len(*a.Label) >= len(token) {
		t.Errorf("%s: actor %+v, want the token of %s by its prefix", e.Action, a, email)
	}
}

// idAuditScope fails the test unless e is in project and environment (nil:
// none).
func idAuditScope(t *testing.T, e trailEntry, project, env *uuid.UUID) {
	t.Helper()
	if fmt.Sprint(e.ProjectID) != fmt.Sprint(project) || fmt.Sprint(e.EnvironmentID) != fmt.Sprint(env) {
		t.Errorf("%s %s: project %v environment %v, want %v %v", e.Action, e.Resource.ID, e.ProjectID, e.EnvironmentID, project, env)
	}
}

// idAuditResource fails the test unless e's resource is {typ, id, key, name}
// ("" for none).
func idAuditResource(t *testing.T, e trailEntry, typ, id, key, name string) {
	t.Helper()
	str := idAuditStr
	r := e.Resource
	if r.Type != typ || r.ID != id || str(r.Key) != key || str(r.Name) != name {
		t.Errorf("%s: resource {%s %s %s %s}, want {%s %s %s %s}", e.Action, r.Type, r.ID, str(r.Key), str(r.Name), typ, id, key, name)
	}
}

// idAuditStr is an optional field's value, "" for none.
func idAuditStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// The first boot records what it creates by the system actor "first boot":
// the workspace, the Default project, its environments, its SDK key (never
// the value it logs) and the ADMIN_EMAIL admin; a restart records nothing.
func TestAuditIdentityFirstBoot(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ADMIN_EMAIL": "root@example.com", "ADMIN_PASSWORD": "first boot password"}
	s := apptest.Start(t, env)
	adminID := mustUserID(t, s, "root@example.com")
	token := s.Token(t, adminID, "read_write", nil)
	project, envs := s.DefaultProject(t)
	p := project.String()

	entries := trail(t, s, token, "")
	var actions []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		actions = append(actions, e.Action)
		if e.Actor.Kind != "system" || e.Actor.Label == nil || *e.Actor.Label != "first boot" || e.Actor.Email != nil {
			t.Errorf("%s: actor %+v, want the system's first boot", e.Action, e.Actor)
		}
		if e.Request.RequestID != nil {
			t.Errorf("%s: request %+v outside any request", e.Action, e.Request)
		}
	}
	want := []string{"workspace.created", "project.created", "environment.created", "environment.created", "environment.created", "sdk_key.created", "user.created"}
	if d := cmp.Diff(want, actions); d != "" {
		t.Fatalf("first boot's entries, oldest first (-want +got):\n%s", d)
	}

	ws := trailFind(t, entries, "workspace.created", "workspace")
	idAuditResource(t, ws, "workspace", "workspace", "", "Switchyard")
	idAuditSame(t, "workspace.created after", ws.After, map[string]any{"workspace_name": "Switchyard", "is_setup_complete": false})

	pe := trailFind(t, entries, "project.created", p)
	idAuditResource(t, pe, "project", p, "default", "Default")
	idAuditScope(t, pe, &project, nil)
	idAuditSame(t, "project.created after", pe.After, idAuditItem(t, s, token, "/api/projects", "id", p))
	idAuditSame(t, "project.created before", pe.Before, nil)

	for slug, id := range envs {
		e := trailFind(t, entries, "environment.created", id.String())
		idAuditScope(t, e, &project, &id)
		idAuditSame(t, "environment.created after ("+slug+")", e.After, idAuditItem(t, s, token, "/api/projects/"+p+"/environments", "id", id))
	}

	key := idAuditItem(t, s, token, "/api/projects/"+p+"/keys", "name", "Production SDK key")
	ke := trailFind(t, entries, "sdk_key.created", fmt.Sprint(key["id"]))
	prod := envs["production"]
	idAuditScope(t, ke, &project, &prod)
	idAuditSame(t, "sdk_key.created after", ke.After, key)

	ue := trailFind(t, entries, "user.created", itoa(adminID))
	idAuditResource(t, ue, "user", itoa(adminID), "", "Admin")
	idAuditSame(t, "user.created after", ue.After, idAuditItem(t, s, token, "/api/users", "id", adminID))

	var logged struct {
		SDKKey string `json:"sdk_key"`
	}
	lines := s.LogLines("first boot: created the Production SDK key of the Default project")
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &logged) != nil || logged.SDKKey == "" {
		t.Fatalf("first boot key log lines: %q", lines)
	}
	idAuditNoSecrets(t, s, token, logged.SDKKey, env["ADMIN_PASSWORD"])

	// A restart on the same database seeds nothing, so records nothing.
	env["DATABASE_URL"] = s.DBURL
	apptest.Start(t, env)
	if n := len(trail(t, s, token, "")); n != len(entries) {
		t.Errorf("after a restart the trail has %d entries, want %d", n, len(entries))
	}
}

// Projects, environments (every setting) and SDK keys: each write an entry
// by the admin's token with the resource as the API answers it.
func TestAuditIdentityProjectsEnvironmentsKeys(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	byAdmin := func(e trailEntry) { t.Helper(); idAuditByToken(t, e, "admin@example.com", admin) }

	// A project, with its environments and key, as its creation answers them.
	var created projectBody
	must(t, s, admin, "POST", "/api/projects", map[string]string{"name": "Checkout Team"}, http.StatusOK, &created)
	pid := created.ID
	p := pid.String()
	pe := idAuditLatest(t, s, admin, "project.created", p)
	byAdmin(pe)
	idAuditResource(t, pe, "project", p, "checkout-team", "Checkout Team")
	idAuditScope(t, pe, &pid, nil)
	listed := idAuditItem(t, s, admin, "/api/projects", "id", p)
	idAuditSame(t, "project.created after", pe.After, listed)
	if pe.Request.RequestID == nil || pe.Request.IP == nil {
		t.Errorf("project.created request = %+v, want the request's id and address", pe.Request)
	}
	for _, env := range created.Environments {
		e := idAuditLatest(t, s, admin, "environment.created", env.ID.String())
		byAdmin(e)
		idAuditScope(t, e, &pid, &env.ID)
		idAuditResource(t, e, "environment", env.ID.String(), env.Slug, env.Name)
	}
	firstKey := trailFind(t, trail(t, s, admin, "project_id="+p+"&action=sdk_key.created"), "sdk_key.created", itoa(created.SDKKey.ID))
	byAdmin(firstKey)
	idAuditSame(t, "first key after", firstKey.After, idAuditItem(t, s, admin, "/api/projects/"+p+"/keys", "id", created.SDKKey.ID))

	// Renamed: before and after.
	must(t, s, admin, "PATCH", "/api/projects/"+p, map[string]string{"name": "Payments"}, http.StatusOK, nil)
	pu := idAuditLatest(t, s, admin, "project.updated", p)
	byAdmin(pu)
	idAuditResource(t, pu, "project", p, "payments", "Payments")
	idAuditSame(t, "project.updated before", pu.Before, listed)
	idAuditSame(t, "project.updated after", pu.After, idAuditItem(t, s, admin, "/api/projects", "id", p))

	// An environment: created, renamed and recolored, approvals on, made the
	// default (the previous default changes too), deleted.
	envs := "/api/projects/" + p + "/environments"
	var qa environmentBody
	must(t, s, admin, "POST", envs, map[string]string{"name": "QA", "slug": "qa"}, http.StatusOK, &qa)
	q := qa.ID.String()
	ce := idAuditLatest(t, s, admin, "environment.created", q)
	byAdmin(ce)
	idAuditScope(t, ce, &pid, &qa.ID)
	idAuditResource(t, ce, "environment", q, "qa", "QA")
	v1 := idAuditItem(t, s, admin, envs, "id", q)
	idAuditSame(t, "environment.created after", ce.After, v1)

	must(t, s, admin, "PATCH", envs+"/"+q, map[string]string{"name": "Quality", "color": "#123456"}, http.StatusOK, nil)
	v2 := idAuditItem(t, s, admin, envs, "id", q)
	eu := idAuditLatest(t, s, admin, "environment.updated", q)
	byAdmin(eu)
	idAuditScope(t, eu, &pid, &qa.ID)
	idAuditSame(t, "rename before", eu.Before, v1)
	idAuditSame(t, "rename after", eu.After, v2)

	must(t, s, admin, "POST", envs+"/"+q+"/require-approval", map[string]any{"require_approval": true}, http.StatusOK, nil)
	v3 := idAuditItem(t, s, admin, envs, "id", q)
	ra := idAuditLatest(t, s, admin, "environment.updated", q)
	byAdmin(ra)
	idAuditSame(t, "require_approval before", ra.Before, v2)
	idAuditSame(t, "require_approval after", ra.After, v3)
	if trailState(t, ra.Before)["require_approval"] != false || trailState(t, ra.After)["require_approval"] != true {
		t.Errorf("require_approval entry: %s -> %s", ra.Before, ra.After)
	}

	dev := created.envBySlug(t, "development")
	devBefore := idAuditItem(t, s, admin, envs, "id", dev)
	must(t, s, admin, "POST", envs+"/"+q+"/default", nil, http.StatusOK, nil)
	de := idAuditLatest(t, s, admin, "environment.updated", q)
	idAuditSame(t, "new default before", de.Before, v3)
	v4 := idAuditItem(t, s, admin, envs, "id", q)
	idAuditSame(t, "new default after", de.After, v4)
	old := idAuditLatest(t, s, admin, "environment.updated", dev.String())
	byAdmin(old)
	idAuditScope(t, old, &pid, &dev)
	idAuditSame(t, "previous default before", old.Before, devBefore)
	idAuditSame(t, "previous default after", old.After, idAuditItem(t, s, admin, envs, "id", dev))
	if old.ID >= de.ID {
		t.Errorf("the previous default's entry %d follows the new default's %d", old.ID, de.ID)
	}
	// Already the default: nothing written, nothing recorded.
	n := len(trail(t, s, admin, ""))
	must(t, s, admin, "POST", envs+"/"+q+"/default", nil, http.StatusOK, nil)
	if got := len(trail(t, s, admin, "")); got != n {
		t.Errorf("making the default the default added %d entries", got-n)
	}

	// SDK keys: created and revoked, by prefix, never the key.
	staging := created.envBySlug(t, "staging")
	key := newKey(t, s, admin, pid, staging)
	kc := idAuditLatest(t, s, admin, "sdk_key.created", itoa(key.ID))
	byAdmin(kc)
	idAuditScope(t, kc, &pid, &staging)
	idAuditResource(t, kc, "sdk_key", itoa(key.ID), "", key.Name)
	keyListed := idAuditItem(t, s, admin, "/api/projects/"+p+"/keys", "id", key.ID)
	idAuditSame(t, "sdk_key.created after", kc.After, keyListed)
	must(t, s, admin, "DELETE", "/api/projects/"+p+"/keys/"+itoa(key.ID), nil, http.StatusNoContent, nil)
	kr := idAuditLatest(t, s, admin, "sdk_key.revoked", itoa(key.ID))
	byAdmin(kr)
	idAuditScope(t, kr, &pid, &staging)
	idAuditSame(t, "sdk_key.revoked before", kr.Before, keyListed)
	idAuditSame(t, "sdk_key.revoked after", kr.After, nil)

	// Deleting the environment is one entry; so is deleting the project,
	// whatever they held.
	must(t, s, admin, "POST", envs+"/"+dev.String()+"/default", nil, http.StatusOK, nil)
	gone := idAuditItem(t, s, admin, envs, "id", q)
	must(t, s, admin, "DELETE", envs+"/"+q, nil, http.StatusNoContent, nil)
	ed := idAuditLatest(t, s, admin, "environment.deleted", q)
	byAdmin(ed)
	idAuditScope(t, ed, &pid, &qa.ID)
	idAuditSame(t, "environment.deleted before", ed.Before, gone)
	idAuditSame(t, "environment.deleted after", ed.After, nil)

	last := idAuditItem(t, s, admin, "/api/projects", "id", p)
	before := len(trail(t, s, admin, ""))
	must(t, s, admin, "DELETE", "/api/projects/"+p, nil, http.StatusNoContent, nil)
	pd := idAuditLatest(t, s, admin, "project.deleted", p)
	byAdmin(pd)
	idAuditScope(t, pd, &pid, nil)
	idAuditSame(t, "project.deleted before", pd.Before, last)
	if after := len(trail(t, s, admin, "")); after != before+1 {
		t.Errorf("deleting a project added %d entries, want 1", after-before)
	}

	idAuditNoSecrets(t, s, admin, created.SDKKey.Key, key.Key, admin)
}

// Members: added, role changed and removed, each an entry of the project
// whose resource is the user.
func TestAuditIdentityMembers(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	project, _ := s.DefaultProject(t)
	members := "/api/projects/" + project.String() + "/members"
	var u userBody
	must(t, s, admin, "POST", "/api/users", map[string]string{"name": "Grace", "email": "grace@example.com", "role": "viewer", "password": "a good password"}, http.StatusOK, &u)
	id := itoa(u.ID)

	check := func(action string, before, after any) {
		t.Helper()
		e := idAuditLatest(t, s, admin, action, id)
		idAuditByToken(t, e, "admin@example.com", admin)
		idAuditResource(t, e, "member", id, "", "Grace")
		idAuditScope(t, e, &project, nil)
		idAuditSame(t, action+" before", e.Before, before)
		idAuditSame(t, action+" after", e.After, after)
	}
	must(t, s, admin, "POST", members, map[string]any{"user_id": u.ID, "role": "viewer"}, http.StatusOK, nil)
	viewer := idAuditItem(t, s, admin, members, "user_id", u.ID)
	check("member.created", nil, viewer)
	must(t, s, admin, "PATCH", members+"/"+id, map[string]string{"role": "admin"}, http.StatusOK, nil)
	promoted := idAuditItem(t, s, admin, members, "user_id", u.ID)
	check("member.role_changed", viewer, promoted)
	must(t, s, admin, "DELETE", members+"/"+id, nil, http.StatusNoContent, nil)
	check("member.deleted", promoted, nil)

	// Project admins read their project's member entries.
	padminID, padmin := s.User(t, "padmin@example.com", "viewer")
	s.Member(t, project, padminID, "admin")
	if got := trail(t, s, padmin, "resource_type=member"); len(got) != 3 {
		t.Errorf("a project admin reads %d member entries, want 3", len(got))
	}
}

// mustUserID returns the id of the user with email.
func mustUserID(t *testing.T, s *apptest.Server, email string) int64 {
	t.Helper()
	var id int64
	if err := s.DB(t).QueryRow(context.Background(), `SELECT id FROM users WHERE email = $1`, email).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// Users: created, role changed, deactivated, reactivated, deleted; never a
// password.
func TestAuditIdentityUsers(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	password := "grace's own password"
	var u userBody
	must(t, s, admin, "POST", "/api/users", map[string]string{"name": "Grace", "email": "grace@example.com", "role": "viewer", "password": password}, http.StatusOK, &u)
	id := itoa(u.ID)
	path := "/api/users/" + id

	state := func() map[string]any { t.Helper(); return idAuditItem(t, s, admin, "/api/users", "id", u.ID) }
	check := func(action, name string, before, after any) {
		t.Helper()
		e := idAuditLatest(t, s, admin, action, id)
		idAuditByToken(t, e, "admin@example.com", admin)
		idAuditResource(t, e, "user", id, "", name)
		idAuditScope(t, e, nil, nil)
		idAuditSame(t, action+" before", e.Before, before)
		idAuditSame(t, action+" after", e.After, after)
	}
	v1 := state()
	check("user.created", "Grace", nil, v1)
	must(t, s, admin, "PATCH", path, map[string]any{"role": "admin", "name": "Grace H."}, http.StatusOK, nil)
	v2 := state()
	check("user.updated", "Grace H.", v1, v2)
	must(t, s, admin, "PATCH", path, map[string]any{"active": false}, http.StatusOK, nil)
	v3 := state()
	check("user.deactivated", "Grace H.", v2, v3)
	must(t, s, admin, "PATCH", path, map[string]any{"active": true}, http.StatusOK, nil)
	v4 := state()
	check("user.reactivated", "Grace H.", v3, v4)
	project, _ := s.DefaultProject(t)
	s.Member(t, project, u.ID, "editor")
	must(t, s, admin, "DELETE", path, nil, http.StatusNoContent, nil)
	check("user.deleted", "Grace H.", v4, nil)
	// Their memberships end with them, each an entry of its project.
	left := idAuditLatest(t, s, admin, "member.deleted", id)
	idAuditResource(t, left, "member", id, "", "Grace H.")
	idAuditScope(t, left, &project, nil)

	idAuditNoSecrets(t, s, admin, password, admin)
}

// Personal access tokens: created and revoked by their owner, by prefix,
// never the token.
func TestAuditIdentityTokens(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	_, ada := s.User(t, "ada@example.com", "viewer")
	var tok struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	must(t, s, ada, "POST", "/api/tokens", map[string]any{"name": "ci", "scope": "read_only", "expires_in_days": 30}, http.StatusOK, &tok)
	listed := idAuditItem(t, s, ada, "/api/tokens", "id", tok.ID)
	id := itoa(tok.ID)

	created := idAuditLatest(t, s, admin, "token.created", id)
	idAuditByToken(t, created, "ada@example.com", ada)
	idAuditResource(t, created, "token", id, "", "ci")
	idAuditScope(t, created, nil, nil)
	idAuditSame(t, "token.created after", created.After, listed)

	// A read_only token may not revoke; refused, it records nothing (but
	// was used, which the list shows).
	must(t, s, tok.Token, "DELETE", "/api/tokens/"+id, nil, http.StatusForbidden, nil)
	if got := trail(t, s, admin, "resource_type=token"); len(got) != 1 {
		t.Errorf("token entries after a refused revocation: %d, want 1", len(got))
	}
	listed = idAuditItem(t, s, ada, "/api/tokens", "id", tok.ID)
	status, raw := call(t, s, ada, "DELETE", "/api/tokens/"+id, nil)
	if status != http.StatusNoContent {
		t.Fatalf("revoke = %d %s", status, raw)
	}
	revoked := idAuditLatest(t, s, admin, "token.revoked", id)
	idAuditByToken(t, revoked, "ada@example.com", ada)
	idAuditResource(t, revoked, "token", id, "", "ci")
	idAuditSame(t, "token.revoked before", revoked.Before, listed)
	idAuditSame(t, "token.revoked after", revoked.After, nil)

	idAuditNoSecrets(t, s, admin, tok.Token, ada, admin)
}

// Sign-ins: a success by the user; failures by an anonymous actor with the
// address tried, recorded although the sign-in fails; the lockout when it
// begins; refusals while locked.
func TestAuditIdentitySignIns(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	adaID, _ := s.User(t, "ada@example.com", "viewer")
	bobID, _ := s.User(t, "bob@example.com", "editor")

	if r := login(t, s, "Bob@Example.com", "password123"); r.status != http.StatusOK {
		t.Fatalf("login = %d %v", r.status, r.body)
	}
	in := idAuditLatest(t, s, admin, "auth.login", itoa(bobID))
	if in.Actor.Kind != "user" || idAuditStr(in.Actor.ID) != itoa(bobID) || in.Actor.Email == nil || *in.Actor.Email != "bob@example.com" {
		t.Errorf("auth.login actor %+v, want bob", in.Actor)
	}
	idAuditResource(t, in, "auth", itoa(bobID), "", "")
	idAuditSame(t, "auth.login after", in.After, map[string]any{"method": "password"})

	// An unknown address: the resource is the address.
	login(t, s, "Nobody@example.com", "guess")
	nobody := idAuditLatest(t, s, admin, "auth.login_failed", "nobody@example.com")
	if nobody.Actor.Kind != "anonymous" || nobody.Actor.Email == nil || *nobody.Actor.Email != "nobody@example.com" || nobody.Actor.ID != nil {
		t.Errorf("failure actor %+v, want anonymous with the address tried", nobody.Actor)
	}

	// Five failures lock ada's address; the fifth's entries are the failure,
	// then the lockout.
	for i := 0; i < 5; i++ {
		if r := login(t, s, "ada@example.com", "wrong password"); r.status != http.StatusUnauthorized {
			t.Fatalf("failure %d = %d", i+1, r.status)
		}
	}
	if r := login(t, s, "ada@example.com", "password123"); r.status != http.StatusTooManyRequests {
		t.Fatalf("right password while locked = %d, want 429", r.status)
	}
	entries := trail(t, s, admin, "resource_type=auth&resource_id="+itoa(adaID))
	var got []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		got = append(got, e.Action+" "+fmt.Sprint(trailState(t, e.After)["error"]))
		if e.Actor.Kind != "anonymous" || e.Actor.Email == nil || *e.Actor.Email != "ada@example.com" {
			t.Errorf("%s actor %+v, want anonymous ada@example.com", e.Action, e.Actor)
		}
	}
	want := []string{
		"auth.login_failed invalid_credentials", "auth.login_failed invalid_credentials", "auth.login_failed invalid_credentials",
		"auth.login_failed invalid_credentials", "auth.login_failed invalid_credentials", "auth.locked <nil>", "auth.login_failed locked",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ada's sign-in entries, oldest first (-want +got):\n%s", d)
	}
	fifth, locked, refused := entries[2], entries[1], entries[0]
	if trailState(t, fifth.After)["attempts_remaining"] != float64(0) {
		t.Errorf("fifth failure after = %s, want attempts_remaining 0", fifth.After)
	}
	if st := trailState(t, locked.After); st["failures"] != float64(5) || st["locked_until"] == nil {
		t.Errorf("auth.locked after = %s", locked.After)
	}
	if trailState(t, refused.After)["retry_after_seconds"] != float64(900) {
		t.Errorf("refusal while locked after = %s, want retry_after_seconds 900", refused.After)
	}
	idAuditNoSecrets(t, s, admin, "wrong password", "password123", "guess")
}

// The setup wizard's admin is the actor of what the wizard does: the
// workspace renamed, the admin created, auth.setup.
func TestAuditIdentitySetup(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	password := "the wizard's password"
	var me struct {
		ID int64 `json:"id"`
	}
	must(t, s, "", "POST", "/api/auth/setup", map[string]string{"workspace_name": "Acme", "name": "Ada", "email": "Ada@example.com", "password": password}, http.StatusOK, &me)
	token := s.Token(t, me.ID, "read_write", nil)
	id := itoa(me.ID)

	entries := trail(t, s, token, "actor=ada@example.com")
	var got []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		got = append(got, e.Action)
		if e.Actor.Kind != "user" || idAuditStr(e.Actor.ID) != id || e.Actor.Email == nil || *e.Actor.Email != "ada@example.com" {
			t.Errorf("%s actor %+v, want the new admin", e.Action, e.Actor)
		}
	}
	if d := cmp.Diff([]string{"workspace.updated", "user.created", "auth.setup"}, got); d != "" {
		t.Fatalf("the wizard's entries (-want +got):\n%s", d)
	}
	ws := trailFind(t, entries, "workspace.updated", "workspace")
	idAuditResource(t, ws, "workspace", "workspace", "", "Acme")
	idAuditSame(t, "workspace before", ws.Before, map[string]any{"workspace_name": "Switchyard", "is_setup_complete": false})
	var info map[string]any
	must(t, s, "", "GET", "/api/auth/workspace", nil, http.StatusOK, &info)
	idAuditSame(t, "workspace after", ws.After, info)
	idAuditSame(t, "user.created after", trailFind(t, entries, "user.created", id).After, idAuditItem(t, s, token, "/api/users", "id", me.ID))
	idAuditResource(t, trailFind(t, entries, "auth.setup", id), "auth", id, "", "")

	// A second setup fails and records nothing.
	n := len(trail(t, s, token, ""))
	must(t, s, "", "POST", "/api/auth/setup", map[string]string{"name": "Eve", "email": "eve@example.com", "password": password}, http.StatusConflict, nil)
	if got := len(trail(t, s, token, "")); got != n {
		t.Errorf("a refused setup added %d entries", got-n)
	}
	idAuditNoSecrets(t, s, token, password, token)
}

// A write that fails, in its transaction or before it, leaves no entry.
func TestAuditIdentityFailedWritesLeaveNoEntry(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	adminID, admin := s.User(t, "admin@example.com", "admin")
	project, envs := s.DefaultProject(t)
	p := "/api/projects/" + project.String()
	key := idAuditItem(t, s, admin, p+"/keys", "name", "Production SDK key")
	before := trail(t, s, admin, "")

	for _, w := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"DELETE", p, nil, http.StatusUnprocessableEntity},                                                   // the last project
		{"DELETE", p + "/environments/" + envs["development"].String(), nil, http.StatusUnprocessableEntity}, // the default
		{"DELETE", p + "/keys/" + fmt.Sprint(key["id"]), nil, http.StatusUnprocessableEntity},                // the last server key
		{"PATCH", p + "/environments/" + envs["staging"].String(), map[string]string{"name": " "}, http.StatusUnprocessableEntity},
		{"POST", p + "/keys", map[string]any{"name": "k", "environment_id": uuid.New()}, http.StatusUnprocessableEntity},
		{"POST", p + "/environments", map[string]string{"name": "Again", "slug": "staging"}, http.StatusConflict},
		{"PATCH", "/api/users/" + itoa(adminID), map[string]string{"role": "viewer"}, http.StatusUnprocessableEntity}, // the last admin
		{"POST", "/api/users", map[string]string{"name": "Dup", "email": "ADMIN@example.com", "role": "viewer", "password": "long enough"}, http.StatusConflict},
		{"POST", p + "/members", map[string]any{"user_id": 999999, "role": "viewer"}, http.StatusNotFound},
		{"PATCH", p + "/members/" + itoa(adminID), map[string]string{"role": "editor"}, http.StatusNotFound},
		{"DELETE", "/api/tokens/999999", nil, http.StatusNotFound},
		{"PATCH", p, map[string]string{"name": "!!!"}, http.StatusUnprocessableEntity},
	} {
		if status, raw := call(t, s, admin, w.method, w.path, w.body); status != w.status {
			t.Errorf("%s %s = %d %s, want %d", w.method, w.path, status, raw, w.status)
		}
	}
	if after := trail(t, s, admin, ""); len(after) != len(before) {
		t.Errorf("failed writes added %d entries, the newest %s", len(after)-len(before), after[0].Action)
	}
}
