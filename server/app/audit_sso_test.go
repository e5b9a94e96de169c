package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// noSecretIn fails the test when the trail's JSON holds a secret: the
// client secret, a client_secret field, or any of the values given.
func noSecretIn(t *testing.T, entries []trailEntry, secrets ...string) {
	t.Helper()
	raw, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(secrets, opClientSecret, `"client_secret":`) {
		if strings.Contains(string(raw), s) {
			t.Errorf("the trail holds %q", s)
		}
	}
}

// actions lists the entries' actions, oldest first.
func actions(entries []trailEntry) []string {
	out := make([]string, 0, len(entries))
	for i := len(entries) - 1; i >= 0; i-- {
		out = append(out, entries[i].Action)
	}
	return out
}

// Single sign-on's settings: created, changed (the secret alone too),
// resubmitted unchanged (nothing) and removed, each with the settings as
// GET shows them and never the secret.
func TestAuditSSOSettings(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	all := func() []trailEntry { return trail(t, w.s, w.admin, "resource_type=sso") }

	created := trailFind(t, all(), "sso.created", "sso")
	if created.Actor.Kind != "token" || created.Actor.Email == nil || *created.Actor.Email != "root@example.com" || trailState(t, created.Before) != nil {
		t.Errorf("sso.created by %+v, before %s", created.Actor, created.Before)
	}
	if after := trailState(t, created.After); after["issuer"] != w.op.URL || after["client_secret_set"] != true ||
		after["redirect_uri"] != testPublicURL+"/api/auth/oidc/callback" || after["auto_provision"] != true {
		t.Errorf("sso.created after = %v", after)
	}

	w.configure(t, map[string]any{"auto_provision": false, "allowed_email_domains": []string{"example.com"}})
	updated := trailFind(t, all(), "sso.updated", "sso")
	if b, a := trailState(t, updated.Before), trailState(t, updated.After); b["auto_provision"] != true || a["auto_provision"] != false ||
		len(a["allowed_email_domains"].([]any)) != 1 {
		t.Errorf("sso.updated before %v after %v", b, a)
	}

	// The same settings again: nothing changed, nothing recorded.
	n := len(all())
	w.configure(t, map[string]any{"auto_provision": false, "allowed_email_domains": []string{"example.com"}})
	if got := len(all()); got != n {
		t.Errorf("an unchanged PUT recorded %d entries", got-n)
	}
	// Another secret is a change, shown only as client_secret_set.
	status, raw, _ := w.s.Do(t, apptest.Request{Method: "PUT", Path: "/api/workspace/sso", Bearer: w.admin,
		Body: map[string]any{"issuer": w.op.URL, "client_id": opClientID, "client_secret": "rotated-secret-never-shown",
			"auto_provision": false, "allowed_email_domains": []string{"example.com"}}})
	if status != http.StatusOK {
		t.Fatalf("PUT with another secret = %d %s", status, raw)
	}
	if got := all(); len(got) != n+1 || got[0].Action != "sso.updated" {
		t.Errorf("a new secret recorded %v, want one sso.updated", actions(got[:len(got)-n]))
	}

	must(t, w.s, w.admin, "DELETE", "/api/workspace/sso", nil, http.StatusNoContent, nil)
	deleted := trailFind(t, all(), "sso.deleted", "sso")
	if trailState(t, deleted.After) != nil || trailState(t, deleted.Before)["issuer"] != w.op.URL {
		t.Errorf("sso.deleted before %s after %s", deleted.Before, deleted.After)
	}
	// Off already: nothing to remove, nothing recorded.
	must(t, w.s, w.admin, "DELETE", "/api/workspace/sso", nil, http.StatusNoContent, nil)
	entries := all()
	if got := actions(entries); strings.Join(got, " ") != "sso.created sso.updated sso.updated sso.deleted" {
		t.Errorf("actions %v", got)
	}
	for _, e := range entries {
		if e.Resource.Type != "sso" || e.Resource.ID != "sso" || e.ProjectID != nil {
			t.Errorf("%s: resource %+v, project %v", e.Action, e.Resource, e.ProjectID)
		}
	}
	noSecretIn(t, trail(t, w.s, w.admin, ""), "rotated-secret-never-shown")
}

// A sign-in records what it did by the actor sso, the user signing in: the
// user it provisioned or linked, the memberships and workspace role the
// groups gave or took, and auth.login; in the sign-in's transaction.
func TestAuditSSOSignIn(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	project, _ := w.s.DefaultProject(t)
	w.configure(t, map[string]any{
		"group_mappings": []map[string]any{
			{"group": "eng", "project_id": project, "role": "editor"},
			{"group": "leads", "project_id": project, "role": "admin"},
		},
		"admin_groups": []string{"sw-admins"},
	})
	since := func(n int) []trailEntry {
		all := trail(t, w.s, w.admin, "")
		return all[:len(all)-n]
	}
	start := len(trail(t, w.s, w.admin, ""))
	wantActor := func(e trailEntry, id int64, email string) {
		t.Helper()
		if e.Actor.Kind != "sso" || e.Actor.ID == nil || *e.Actor.ID != itoa(id) || e.Actor.Email == nil || *e.Actor.Email != email {
			t.Errorf("%s by %+v, want sso %d %s", e.Action, e.Actor, id, email)
		}
	}

	// A new user, provisioned as an admin through an admin group.
	w.op.addUser(opUser{Subject: "sub-lin", Email: "Lin@Example.com", EmailVerified: true, Name: "Lin", Groups: []string{"leads", "sw-admins"}})
	if _, session := w.signIn(t, "sub-lin", "/"); session == nil {
		t.Fatal("sign-in failed")
	}
	lin := w.user(t, "lin@example.com").id
	got := since(start)
	if a := strings.Join(actions(got), " "); a != "user.created member.created auth.login" {
		t.Fatalf("first sign-in recorded %s", a)
	}
	for _, e := range got {
		wantActor(e, lin, "lin@example.com")
		if e.Request.RequestID == nil {
			t.Errorf("%s: no request", e.Action)
		}
	}
	user := trailFind(t, got, "user.created", itoa(lin))
	if a := trailState(t, user.After); a["role"] != "admin" || a["sso_linked"] != true || a["active"] != true || a["email"] != "Lin@Example.com" {
		t.Errorf("user.created after %v", a)
	}
	member := trailFind(t, got, "member.created", itoa(lin))
	if member.ProjectID == nil || *member.ProjectID != project || trailState(t, member.Before) != nil || trailState(t, member.After)["role"] != "admin" {
		t.Errorf("member.created: project %v, before %s, after %s", member.ProjectID, member.Before, member.After)
	}
	if login := trailFind(t, got, "auth.login", itoa(lin)); login.Resource.Type != "auth" || trailState(t, login.After)["method"] != "sso" {
		t.Errorf("auth.login resource %+v after %s", login.Resource, login.After)
	}

	// Fewer groups: the role in the project drops and admin goes.
	start = len(trail(t, w.s, w.admin, ""))
	w.op.addUser(opUser{Subject: "sub-lin", Email: "lin@example.com", EmailVerified: true, Name: "Lin", Groups: []string{"eng"}})
	w.signIn(t, "sub-lin", "/")
	got = since(start)
	if a := strings.Join(actions(got), " "); a != "member.role_changed user.updated auth.login" {
		t.Fatalf("second sign-in recorded %s", a)
	}
	changed := trailFind(t, got, "member.role_changed", itoa(lin))
	if trailState(t, changed.Before)["role"] != "admin" || trailState(t, changed.After)["role"] != "editor" {
		t.Errorf("member.role_changed %s -> %s", changed.Before, changed.After)
	}
	demoted := trailFind(t, got, "user.updated", itoa(lin))
	if trailState(t, demoted.Before)["role"] != "admin" || trailState(t, demoted.After)["role"] != "viewer" {
		t.Errorf("user.updated %s -> %s", demoted.Before, demoted.After)
	}
	for _, e := range got {
		wantActor(e, lin, "lin@example.com")
	}

	// No groups: the mapping-made membership goes. The same sign-in again
	// changes nothing but signs in.
	start = len(trail(t, w.s, w.admin, ""))
	w.op.addUser(opUser{Subject: "sub-lin", Email: "lin@example.com", EmailVerified: true, Name: "Lin"})
	w.signIn(t, "sub-lin", "/")
	w.signIn(t, "sub-lin", "/")
	if a := strings.Join(actions(since(start)), " "); a != "member.deleted auth.login auth.login" {
		t.Errorf("sign-ins without groups recorded %s", a)
	}

	// An existing user is linked by email: sso_linked changes.
	grace, _ := w.s.User(t, "grace@example.com", "editor")
	w.op.addUser(opUser{Subject: "sub-grace", Email: "grace@example.com", EmailVerified: true, Name: "Grace"})
	start = len(trail(t, w.s, w.admin, ""))
	w.signIn(t, "sub-grace", "/")
	got = since(start)
	if a := strings.Join(actions(got), " "); a != "user.updated auth.login" {
		t.Fatalf("linking sign-in recorded %s", a)
	}
	linked := trailFind(t, got, "user.updated", itoa(grace))
	if trailState(t, linked.Before)["sso_linked"] != false || trailState(t, linked.After)["sso_linked"] != true {
		t.Errorf("link %s -> %s", linked.Before, linked.After)
	}
	wantActor(linked, grace, "grace@example.com")
	noSecretIn(t, trail(t, w.s, w.admin, ""))
}

// Every refused sign-in is an auth.login_failed by an anonymous actor,
// with the address tried when the provider named one, and the failure's
// code; nothing else is recorded, and nothing else is created.
func TestAuditSSOSignInFailures(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, map[string]any{"allowed_email_domains": []string{"example.com"}})
	w.op.addUser(opUser{Subject: "sub-ok", Email: "ok@example.com", EmailVerified: true})
	w.op.addUser(opUser{Subject: "sub-unverified", Email: "victim@example.com", EmailVerified: false})
	w.op.addUser(opUser{Subject: "sub-elsewhere", Email: "eve@elsewhere.org", EmailVerified: true})
	gone, _ := w.s.User(t, "gone@example.com", "viewer")
	if _, err := w.s.DB(t).Exec(context.Background(), `UPDATE users SET active = false WHERE id = $1`, gone); err != nil {
		t.Fatal(err)
	}
	w.op.addUser(opUser{Subject: "sub-gone", Email: "gone@example.com", EmailVerified: true})
	users := w.userCount(t)

	for _, tc := range []struct {
		name, code, email string
		resource          string // the user when the address has one, else the address
		do                func(t *testing.T)
	}{
		{"no sign-in cookie", "sso_state", "", "", func(t *testing.T) {
			f := w.begin(t, "/")
			loc, session := w.callback(t, w.op.authorize(t, f.authURL.String(), "sub-ok"), nil)
			wantError(t, loc, session, "sso_state")
		}},
		{"unverified email", "sso_token", "victim@example.com", "victim@example.com", func(t *testing.T) {
			loc, session := w.signIn(t, "sub-unverified", "/")
			wantError(t, loc, session, "sso_token")
		}},
		{"domain not allowed", "sso_domain", "eve@elsewhere.org", "eve@elsewhere.org", func(t *testing.T) {
			loc, session := w.signIn(t, "sub-elsewhere", "/")
			wantError(t, loc, session, "sso_domain")
		}},
		{"deactivated user", "sso_deactivated", "gone@example.com", itoa(gone), func(t *testing.T) {
			loc, session := w.signIn(t, "sub-gone", "/")
			wantError(t, loc, session, "sso_deactivated")
		}},
		{"not provisioned", "sso_not_provisioned", "new@example.com", "New@example.com", func(t *testing.T) {
			w.configure(t, map[string]any{"allowed_email_domains": []string{"example.com"}, "auto_provision": false})
			w.op.addUser(opUser{Subject: "sub-new", Email: "New@example.com", EmailVerified: true})
			loc, session := w.signIn(t, "sub-new", "/")
			wantError(t, loc, session, "sso_not_provisioned")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := len(trail(t, w.s, w.admin, "resource_type=sso&action=sso.*"))
			before := len(trail(t, w.s, w.admin, ""))
			tc.do(t)
			// A test's own settings change is sso.updated; anything else
			// is the failure's entry, alone.
			settings := len(trail(t, w.s, w.admin, "resource_type=sso&action=sso.*")) - start
			all := trail(t, w.s, w.admin, "")
			got := all[:len(all)-before-settings]
			if len(got) != 1 || got[0].Action != "auth.login_failed" {
				t.Fatalf("recorded %v, want one auth.login_failed", actions(got))
			}
			e := got[0]
			var email string
			if e.Actor.Email != nil {
				email = *e.Actor.Email
			}
			if e.Actor.Kind != "anonymous" || e.Actor.ID != nil || email != tc.email {
				t.Errorf("actor %+v, want anonymous with email %q", e.Actor, tc.email)
			}
			if a := trailState(t, e.After); a["error"] != tc.code || a["method"] != "sso" || e.Resource.Type != "auth" || e.Resource.ID != tc.resource {
				t.Errorf("resource %+v after %v, want auth %q with error %s", e.Resource, a, tc.resource, tc.code)
			}
		})
	}
	if n := w.userCount(t); n != users {
		t.Errorf("failed sign-ins changed the users: %d, want %d", n, users)
	}
	failed := trail(t, w.s, w.admin, "action=auth.login_failed")
	if len(failed) != 5 {
		t.Errorf("%d auth.login_failed entries, want 5", len(failed))
	}
	if len(trail(t, w.s, w.admin, "action=auth.login")) != 0 || len(trail(t, w.s, w.admin, "resource_type=user")) != 0 {
		t.Error("a refused sign-in recorded a sign-in or a user change")
	}
	noSecretIn(t, trail(t, w.s, w.admin, ""))
}
