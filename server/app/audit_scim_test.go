package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// scimTokenFull creates a SCIM token and returns its value, id and prefix.
func scimTokenFull(t *testing.T, s *apptest.Server, admin, name string) (tok, id, prefix string) {
	t.Helper()
	var created struct {
		ID     int64  `json:"id"`
		Token  string `json:"token"`
		Prefix string `json:"prefix"`
	}
	must(t, s, admin, "POST", "/api/workspace/scim-tokens", map[string]string{"name": name}, http.StatusCreated, &created)
	return created.Token, itoa(created.ID), created.Prefix
}

// since returns the entries recorded after the first n, oldest last.
func since(t *testing.T, s *apptest.Server, admin string, n int) []trailEntry {
	t.Helper()
	all := trail(t, s, admin, "")
	return all[:len(all)-n]
}

// SCIM tokens: created and revoked by a person, never with the token.
func TestAuditSCIMTokens(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	tok, id, prefix := scimTokenFull(t, s, admin, "Okta")
	must(t, s, admin, "DELETE", "/api/workspace/scim-tokens/"+id, nil, http.StatusNoContent, nil)
	must(t, s, admin, "DELETE", "/api/workspace/scim-tokens/"+id, nil, http.StatusNotFound, nil)

	entries := trail(t, s, admin, "resource_type=scim_token")
	if a := strings.Join(actions(entries), " "); a != "scim_token.created scim_token.revoked" {
		t.Fatalf("actions %s", a)
	}
	created, revoked := trailFind(t, entries, "scim_token.created", id), trailFind(t, entries, "scim_token.revoked", id)
	for _, e := range entries {
		if e.Actor.Kind != "token" || e.Actor.Email == nil || *e.Actor.Email != "admin@example.com" ||
			e.Resource.Name == nil || *e.Resource.Name != "Okta" || e.Resource.Key == nil || *e.Resource.Key != prefix {
			t.Errorf("%s: actor %+v, resource %+v", e.Action, e.Actor, e.Resource)
		}
	}
	if a := trailState(t, created.After); trailState(t, created.Before) != nil || a["prefix"] != prefix || a["name"] != "Okta" || a["id"] != float64(mustInt(t, id)) {
		t.Errorf("created: before %s after %s", created.Before, created.After)
	}
	if trailState(t, revoked.Before)["prefix"] != prefix || trailState(t, revoked.After) != nil {
		t.Errorf("revoked: before %s after %s", revoked.Before, revoked.After)
	}
	noSecretIn(t, trail(t, s, admin, ""), tok, tok[len(prefix):])
}

// Users through SCIM: each change is one user.* entry by the SCIM token,
// with the user as /api/users shows them; a request that changes nothing
// records nothing.
func TestAuditSCIMUsers(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	tok, tokID, prefix := scimTokenFull(t, s, admin, "Okta")
	deactivate := map[string]any{
		"schemas":    []string{patchOpSchema},
		"Operations": []any{map[string]any{"op": "replace", "value": map[string]any{"active": false}}},
	}
	reactivate := map[string]any{
		"schemas":    []string{patchOpSchema},
		"Operations": []any{map[string]any{"op": "Replace", "path": "active", "value": "True"}},
	}
	start := len(trail(t, s, admin, ""))

	id := scimUser(t, s, tok, "ann.lee@example.com")
	scimMust(t, s, tok, "PATCH", "/scim/v2/Users/"+id, deactivate, http.StatusOK)
	scimMust(t, s, tok, "PATCH", "/scim/v2/Users/"+id, deactivate, http.StatusOK) // already: nothing
	scimMust(t, s, tok, "PATCH", "/scim/v2/Users/"+id, reactivate, http.StatusOK)
	put := oktaUser("ann.lee@example.com")
	put["displayName"] = "Ann Lee-Smith"
	scimMust(t, s, tok, "PUT", "/scim/v2/Users/"+id, put, http.StatusOK)
	scimMust(t, s, tok, "PUT", "/scim/v2/Users/"+id, put, http.StatusOK) // the same: nothing
	put["externalId"] = "00u-moved"
	scimMust(t, s, tok, "PUT", "/scim/v2/Users/"+id, put, http.StatusOK) // a SCIM attribute only
	p := newProject(t, s, admin)
	s.Member(t, p.ID, mustInt(t, id), "editor")
	mid := len(trail(t, s, admin, ""))
	scimMust(t, s, tok, "DELETE", "/scim/v2/Users/"+id, nil, http.StatusNoContent)
	scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser("ann.lee@example.com"), http.StatusCreated) // comes back

	all := since(t, s, admin, start)
	var scimMade []trailEntry
	for _, e := range all {
		if e.Actor.Kind == "scim" {
			scimMade = append(scimMade, e)
		}
	}
	want := "user.created user.deactivated user.reactivated user.updated user.updated member.deleted user.deleted user.reactivated"
	if a := strings.Join(actions(scimMade), " "); a != want {
		t.Fatalf("SCIM recorded %s, want %s", a, want)
	}
	for _, e := range scimMade {
		if e.Actor.ID == nil || *e.Actor.ID != tokID || e.Actor.Label == nil || *e.Actor.Label != prefix || e.Actor.Email != nil {
			t.Errorf("%s by %+v, want SCIM token %s (%s)", e.Action, e.Actor, tokID, prefix)
		}
		if e.Resource.ID != id || e.Request.RequestID == nil {
			t.Errorf("%s: resource %+v, request %+v", e.Action, e.Resource, e.Request)
		}
	}
	created := trailFind(t, all, "user.created", id)
	if a := trailState(t, created.After); a["email"] != "ann.lee@example.com" || a["role"] != "viewer" || a["active"] != true || a["name"] != "Ann Lee" {
		t.Errorf("user.created after %v", a)
	}
	deactivated := trailFind(t, all, "user.deactivated", id)
	if trailState(t, deactivated.Before)["active"] != true || trailState(t, deactivated.After)["active"] != false {
		t.Errorf("user.deactivated %s -> %s", deactivated.Before, deactivated.After)
	}
	// The rename, the older of the two updates (entries come newest first);
	// the newer changed externalId alone, which /api/users does not show.
	renamed := scimMade[len(scimMade)-4]
	if renamed.Action != "user.updated" || trailState(t, renamed.Before)["name"] != "Ann Lee" || trailState(t, renamed.After)["name"] != "Ann Lee-Smith" {
		t.Errorf("%s %s -> %s, want the rename", renamed.Action, renamed.Before, renamed.After)
	}
	deleted := trailFind(t, all, "user.deleted", id)
	if trailState(t, deleted.Before)["active"] != true || trailState(t, deleted.After)["active"] != false {
		t.Errorf("user.deleted %s -> %s", deleted.Before, deleted.After)
	}
	removed := trailFind(t, since(t, s, admin, mid), "member.deleted", id)
	if removed.ProjectID == nil || *removed.ProjectID != p.ID || trailState(t, removed.Before)["role"] != "editor" || trailState(t, removed.After) != nil {
		t.Errorf("member.deleted: project %v, %s -> %s", removed.ProjectID, removed.Before, removed.After)
	}
	// A failed request records nothing.
	n := len(trail(t, s, admin, ""))
	scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser("admin@example.com"), http.StatusConflict)
	if got := len(trail(t, s, admin, "")); got != n {
		t.Errorf("a refused SCIM request recorded %d entries", got-n)
	}
	noSecretIn(t, trail(t, s, admin, ""), tok)
}

// Groups through SCIM: scim.created, scim.updated (members before and
// after) and scim.deleted by the SCIM token, and the memberships and
// workspace roles their mappings change, by the same token.
func TestAuditSCIMGroups(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	p := newProject(t, w.s, w.admin)
	w.configure(t, map[string]any{
		"group_mappings": []map[string]any{{"group": "Checkout", "project_id": p.ID, "role": "editor"}},
		"admin_groups":   []string{"Admins"},
	})
	tok, tokID, _ := scimTokenFull(t, w.s, w.admin, "Entra")
	ann := scimUser(t, w.s, tok, "ann@example.com")
	bob := scimUser(t, w.s, tok, "bob@example.com")
	members := func(raw []byte) []string {
		var out []string
		if st := trailState(t, raw); st != nil {
			for _, m := range st["members"].([]any) {
				out = append(out, m.(map[string]any)["value"].(string))
			}
		}
		return out
	}
	step := func(name string, do func() string, want string) []trailEntry {
		t.Helper()
		start := len(trail(t, w.s, w.admin, ""))
		gid := do()
		got := since(t, w.s, w.admin, start)
		if a := strings.Join(actions(got), " "); a != want {
			t.Fatalf("%s recorded %q, want %q", name, a, want)
		}
		for _, e := range got {
			if e.Actor.Kind != "scim" || e.Actor.ID == nil || *e.Actor.ID != tokID {
				t.Errorf("%s: %s by %+v", name, e.Action, e.Actor)
			}
			if e.Resource.Type == "scim" && (e.Resource.ID != gid || e.Resource.Name == nil) {
				t.Errorf("%s: resource %+v, want group %s", name, e.Resource, gid)
			}
		}
		return got
	}

	var gid string
	got := step("create with a member", func() string {
		gid = scimGroup(t, w.s, tok, oktaGroup("Checkout", ann))
		return gid
	}, "scim.created member.created")
	if c := trailFind(t, got, "scim.created", gid); trailState(t, c.Before) != nil || strings.Join(members(c.After), ",") != ann ||
		trailState(t, c.After)["displayName"] != "Checkout" {
		t.Errorf("scim.created %s -> %s", c.Before, c.After)
	}
	if m := trailFind(t, got, "member.created", ann); m.ProjectID == nil || *m.ProjectID != p.ID || trailState(t, m.After)["role"] != "editor" {
		t.Errorf("member.created: project %v after %s", m.ProjectID, m.After)
	}

	got = step("add a member", func() string { patchGroup(t, w.s, tok, gid, entraMembers("Add", bob)); return gid }, "scim.updated member.created")
	u := trailFind(t, got, "scim.updated", gid)
	if strings.Join(members(u.Before), ",") != ann || strings.Join(members(u.After), ",") != ann+","+bob {
		t.Errorf("scim.updated members %v -> %v", members(u.Before), members(u.After))
	}
	step("add them again", func() string { patchGroup(t, w.s, tok, gid, entraMembers("Add", bob)); return gid }, "")
	got = step("remove a member", func() string { patchGroup(t, w.s, tok, gid, oktaRemoveMember(ann)); return gid }, "scim.updated member.deleted")
	if m := trailFind(t, got, "member.deleted", ann); trailState(t, m.Before)["role"] != "editor" {
		t.Errorf("member.deleted before %s", m.Before)
	}
	got = step("rename it to the admin group", func() string { patchGroup(t, w.s, tok, gid, entraRename("Admins")); return gid },
		"scim.updated user.updated member.deleted")
	if r := trailFind(t, got, "scim.updated", gid); trailState(t, r.Before)["displayName"] != "Checkout" || trailState(t, r.After)["displayName"] != "Admins" {
		t.Errorf("rename %s -> %s", r.Before, r.After)
	}
	if r := trailFind(t, got, "user.updated", bob); trailState(t, r.Before)["role"] != "viewer" || trailState(t, r.After)["role"] != "admin" {
		t.Errorf("admin by group %s -> %s", r.Before, r.After)
	}
	step("delete the user", func() string {
		scimMust(t, w.s, tok, "DELETE", "/scim/v2/Users/"+bob, nil, http.StatusNoContent)
		return gid
	}, "scim.updated user.updated user.deleted")
	got = step("delete the group", func() string {
		scimMust(t, w.s, tok, "DELETE", "/scim/v2/Groups/"+gid, nil, http.StatusNoContent)
		return gid
	}, "scim.deleted")
	if d := trailFind(t, got, "scim.deleted", gid); trailState(t, d.After) != nil || trailState(t, d.Before)["displayName"] != "Admins" {
		t.Errorf("scim.deleted %s -> %s", d.Before, d.After)
	}
	noSecretIn(t, trail(t, w.s, w.admin, ""), tok)
}

// A reactivation by hand applies the group rules (identity's users), and
// what they change is recorded by whoever reactivated the user.
func TestAuditSCIMGroupRulesOnReactivationByHand(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	p := newProject(t, w.s, w.admin)
	tok := scimToken(t, w.s, w.admin)
	ann := scimUser(t, w.s, tok, "ann@example.com")
	scimGroup(t, w.s, tok, oktaGroup("Checkout Team", ann))
	must(t, w.s, w.admin, "PATCH", "/api/users/"+ann, map[string]bool{"active": false}, http.StatusOK, nil)
	w.configure(t, map[string]any{
		"group_mappings": []map[string]any{{"group": "Checkout Team", "project_id": p.ID, "role": "editor"}},
		"admin_groups":   []string{"Checkout Team"},
	})
	start := len(trail(t, w.s, w.admin, ""))
	must(t, w.s, w.admin, "PATCH", "/api/users/"+ann, map[string]bool{"active": true}, http.StatusOK, nil)
	got := since(t, w.s, w.admin, start)
	for _, action := range []string{"user.updated", "member.created"} {
		e := trailFind(t, got, action, ann)
		if e.Actor.Kind != "token" || e.Actor.Email == nil || *e.Actor.Email != "root@example.com" {
			t.Errorf("%s by %+v, want the admin who reactivated", action, e.Actor)
		}
	}
	if m := trailFind(t, got, "member.created", ann); m.ProjectID == nil || *m.ProjectID != p.ID || trailState(t, m.After)["role"] != "editor" {
		t.Errorf("member.created: project %v after %s", m.ProjectID, m.After)
	}
}
