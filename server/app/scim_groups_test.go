package app_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// SCIM groups give roles through single sign-on's group mappings and admin
// groups (docs/scim.md, Groups and roles). The request bodies are the ones
// Okta and Microsoft Entra ID document for groups.

const (
	groupSchema   = "urn:ietf:params:scim:schemas:core:2.0:Group"
	patchOpSchema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
)

// oktaGroup is Okta's POST /Groups: a displayName and members, each a value
// and a display.
func oktaGroup(name string, memberIDs ...string) map[string]any {
	members := []map[string]any{}
	for _, id := range memberIDs {
		members = append(members, map[string]any{"value": id, "display": "member " + id})
	}
	return map[string]any{"schemas": []string{groupSchema}, "displayName": name, "members": members}
}

// entraGroup is Microsoft Entra ID's POST /Groups: no members (Entra adds
// them by PATCH afterwards), an externalId and meta.
func entraGroup(name string) map[string]any {
	return map[string]any{
		"schemas": []string{groupSchema}, "externalId": uuid.NewString(), "displayName": name,
		"meta": map[string]any{"resourceType": "Group"},
	}
}

// patchOps wraps operations in a PatchOp message.
func patchOps(ops ...map[string]any) map[string]any {
	return map[string]any{"schemas": []string{patchOpSchema}, "Operations": ops}
}

// The group operations as Okta and Entra send them.
func oktaAddMembers(ids ...string) map[string]any {
	vs := []map[string]any{}
	for _, id := range ids {
		vs = append(vs, map[string]any{"value": id, "display": "member " + id})
	}
	return map[string]any{"op": "add", "path": "members", "value": vs}
}

func oktaRemoveMember(id string) map[string]any {
	return map[string]any{"op": "remove", "path": `members[value eq "` + id + `"]`}
}

func oktaRename(gid, name string) map[string]any {
	return map[string]any{"op": "replace", "value": map[string]any{"id": gid, "displayName": name}}
}

func entraMembers(op string, ids ...string) map[string]any {
	vs := []map[string]any{}
	for _, id := range ids {
		vs = append(vs, map[string]any{"value": id})
	}
	return map[string]any{"op": op, "path": "members", "value": vs}
}

func entraRename(name string) map[string]any {
	return map[string]any{"op": "Replace", "path": "displayName", "value": name}
}

// scimUser provisions a user through SCIM (Okta's body) and returns their
// SCIM id.
func scimUser(t *testing.T, s *apptest.Server, tok, email string) string {
	t.Helper()
	return scimMust(t, s, tok, "POST", "/scim/v2/Users", oktaUser(email), http.StatusCreated)["id"].(string)
}

// scimGroup creates a group and returns its id.
func scimGroup(t *testing.T, s *apptest.Server, tok string, body map[string]any) string {
	t.Helper()
	return scimMust(t, s, tok, "POST", "/scim/v2/Groups", body, http.StatusCreated)["id"].(string)
}

func patchGroup(t *testing.T, s *apptest.Server, tok, gid string, ops ...map[string]any) {
	t.Helper()
	scimMust(t, s, tok, "PATCH", "/scim/v2/Groups/"+gid, patchOps(ops...), http.StatusOK)
}

// membership returns a user's role in a project and who made the
// membership ("sso" for mappings, "manual" by hand); empty when there is
// none.
func membership(t *testing.T, s *apptest.Server, project uuid.UUID, user string) (role, source string) {
	t.Helper()
	err := s.DB(t).QueryRow(context.Background(),
		`SELECT role, source FROM project_members WHERE project_id = $1 AND user_id = $2`, project, mustInt(t, user)).Scan(&role, &source)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return role, source
}

func wantMembership(t *testing.T, s *apptest.Server, project uuid.UUID, user, role, source, when string) {
	t.Helper()
	if gotRole, gotSource := membership(t, s, project, user); gotRole != role || gotSource != source {
		t.Errorf("%s: membership %q (%q), want %q (%q)", when, gotRole, gotSource, role, source)
	}
}

func workspaceRole(t *testing.T, s *apptest.Server, user string) string {
	t.Helper()
	var role string
	if err := s.DB(t).QueryRow(context.Background(), `SELECT role FROM users WHERE id = $1`, mustInt(t, user)).Scan(&role); err != nil {
		t.Fatal(err)
	}
	return role
}

// Every way Okta and Entra add a user to a group, or take them out of it,
// sets or removes the mapping-made membership in the same request.
func TestSCIMGroupChangesApplyMappingsAtOnce(t *testing.T) {
	t.Parallel()
	type step func(t *testing.T, w *ssoWorld, tok, mapped, uid string)
	// in starts the case with uid in a group named mapped, and returns it.
	in := func(t *testing.T, w *ssoWorld, tok, mapped, uid string) string {
		t.Helper()
		return scimGroup(t, w.s, tok, oktaGroup(mapped, uid))
	}
	cases := []struct {
		name string
		do   step
		want string // the role in the project afterwards; "" for none
	}{
		{"Okta creates the group with the member", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			in(t, w, tok, mapped, uid)
		}, "editor"},
		{"Okta adds the member", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			gid := scimGroup(t, w.s, tok, oktaGroup(mapped))
			patchGroup(t, w.s, tok, gid, oktaAddMembers(uid))
		}, "editor"},
		{"Entra adds the member", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			gid := scimGroup(t, w.s, tok, entraGroup(mapped))
			patchGroup(t, w.s, tok, gid, entraMembers("Add", uid))
		}, "editor"},
		{"PUT with the member", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			gid := scimGroup(t, w.s, tok, oktaGroup(mapped))
			scimMust(t, w.s, tok, "PUT", "/scim/v2/Groups/"+gid, oktaGroup(mapped, uid), http.StatusOK)
		}, "editor"},
		{"Okta renames a group onto the mapped name", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			gid := scimGroup(t, w.s, tok, oktaGroup(mapped+" (new)", uid))
			patchGroup(t, w.s, tok, gid, oktaRename(gid, mapped))
		}, "editor"},
		{"Okta removes the member by a value path", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			patchGroup(t, w.s, tok, in(t, w, tok, mapped, uid), oktaRemoveMember(uid))
		}, ""},
		{"Entra removes the member by a value array", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			patchGroup(t, w.s, tok, in(t, w, tok, mapped, uid), entraMembers("Remove", uid))
		}, ""},
		{"members replaced by nobody", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			patchGroup(t, w.s, tok, in(t, w, tok, mapped, uid), entraMembers("Replace"))
		}, ""},
		{"PUT without the member", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			gid := in(t, w, tok, mapped, uid)
			scimMust(t, w.s, tok, "PUT", "/scim/v2/Groups/"+gid, oktaGroup(mapped), http.StatusOK)
		}, ""},
		{"Okta renames the group away from the mapped name", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			gid := in(t, w, tok, mapped, uid)
			patchGroup(t, w.s, tok, gid, oktaRename(gid, mapped+" (old)"))
		}, ""},
		{"Entra renames the group to another letter case", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			patchGroup(t, w.s, tok, in(t, w, tok, mapped, uid), entraRename(strings.ToUpper(mapped)))
		}, ""},
		{"the group is deleted", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			gid := in(t, w, tok, mapped, uid)
			scimMust(t, w.s, tok, "DELETE", "/scim/v2/Groups/"+gid, nil, http.StatusNoContent)
		}, ""},
		{"the user is deleted", func(t *testing.T, w *ssoWorld, tok, mapped, uid string) {
			in(t, w, tok, mapped, uid)
			scimMust(t, w.s, tok, "DELETE", "/scim/v2/Users/"+uid, nil, http.StatusNoContent)
		}, ""},
	}
	w := newSSOWorld(t, nil)
	p := newProject(t, w.s, w.admin)
	var mappings []map[string]any
	for i := range cases {
		mappings = append(mappings, map[string]any{"group": "team " + strconv.Itoa(i), "project_id": p.ID, "role": "editor"})
	}
	w.configure(t, map[string]any{"group_mappings": mappings})
	tok := scimToken(t, w.s, w.admin)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			uid := scimUser(t, w.s, tok, uniq("member")+"@example.com")
			before := len(w.s.LogLines("scim change"))
			tc.do(t, w, tok, "team "+strconv.Itoa(i), uid)
			source := "sso"
			if tc.want == "" {
				source = ""
			}
			wantMembership(t, w.s, p.ID, uid, tc.want, source, "afterwards")
			if len(w.s.LogLines("scim change")) <= before {
				t.Error("no scim change audit entry")
			}
		})
	}
}

// The highest role of a user's mapped groups wins; a membership made by
// hand is never changed or removed by groups.
func TestSCIMGroupsHighestRoleAndHandMadeMemberships(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	p := newProject(t, w.s, w.admin)
	w.configure(t, map[string]any{"group_mappings": []map[string]any{
		{"group": "Checkout Viewers", "project_id": p.ID, "role": "viewer"},
		{"group": "Checkout Admins", "project_id": p.ID, "role": "admin"},
	}})
	tok := scimToken(t, w.s, w.admin)
	ann := scimUser(t, w.s, tok, "ann@example.com")
	hand := scimUser(t, w.s, tok, "hand@example.com")
	must(t, w.s, w.admin, "POST", "/api/projects/"+p.ID.String()+"/members",
		map[string]any{"user_id": mustInt(t, hand), "role": "viewer"}, http.StatusOK, nil)

	viewers := scimGroup(t, w.s, tok, oktaGroup("Checkout Viewers", ann, hand))
	wantMembership(t, w.s, p.ID, ann, "viewer", "sso", "in the viewers group")
	admins := scimGroup(t, w.s, tok, entraGroup("Checkout Admins"))
	patchGroup(t, w.s, tok, admins, entraMembers("Add", ann, hand))
	wantMembership(t, w.s, p.ID, ann, "admin", "sso", "in both groups")
	wantMembership(t, w.s, p.ID, hand, "viewer", "manual", "hand-made, in both groups")

	patchGroup(t, w.s, tok, admins, oktaRemoveMember(ann), oktaRemoveMember(hand))
	wantMembership(t, w.s, p.ID, ann, "viewer", "sso", "back in the viewers group only")
	wantMembership(t, w.s, p.ID, hand, "viewer", "manual", "hand-made, out of the admins group")

	scimMust(t, w.s, tok, "DELETE", "/scim/v2/Groups/"+viewers, nil, http.StatusNoContent)
	wantMembership(t, w.s, p.ID, ann, "", "", "in no group")
	wantMembership(t, w.s, p.ID, hand, "viewer", "manual", "hand-made, in no group")
}

// Admin groups make members of a SCIM group workspace admins, and leaving
// demotes them, except the last active admin.
func TestSCIMAdminGroups(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, map[string]any{"admin_groups": []string{"Switchyard Admins"}})
	tok := scimToken(t, w.s, w.admin)
	ann := scimUser(t, w.s, tok, "ann@example.com")
	admins := scimGroup(t, w.s, tok, entraGroup("Switchyard Admins"))

	patchGroup(t, w.s, tok, admins, entraMembers("Add", ann))
	if got := workspaceRole(t, w.s, ann); got != "admin" {
		t.Fatalf("in the admin group: workspace role %s, want admin", got)
	}
	patchGroup(t, w.s, tok, admins, entraMembers("Remove", ann))
	if got := workspaceRole(t, w.s, ann); got != "viewer" {
		t.Errorf("out of the admin group: workspace role %s, want viewer", got)
	}

	// With the workspace's other admin deactivated, the group's only member
	// is the last active admin, and leaving the group keeps them admin.
	patchGroup(t, w.s, tok, admins, oktaAddMembers(ann))
	if _, err := w.s.DB(t).Exec(context.Background(), `UPDATE users SET active = false WHERE email = 'root@example.com'`); err != nil {
		t.Fatal(err)
	}
	patchGroup(t, w.s, tok, admins, oktaRemoveMember(ann))
	if got := workspaceRole(t, w.s, ann); got != "admin" {
		t.Errorf("the last active admin out of the admin group: workspace role %s, want admin kept", got)
	}
	if len(w.s.LogLines("scim kept the last workspace admin")) != 1 {
		t.Error("keeping the last admin was not logged")
	}

	// Handing admin over in one change: the new member is promoted before
	// the old one is demoted, so the old one is not the last admin.
	bob := scimUser(t, w.s, tok, "bob@example.com")
	patchGroup(t, w.s, tok, admins, oktaAddMembers(ann))
	scimMust(t, w.s, tok, "PUT", "/scim/v2/Groups/"+admins, oktaGroup("Switchyard Admins", bob), http.StatusOK)
	if a, b := workspaceRole(t, w.s, ann), workspaceRole(t, w.s, bob); a != "viewer" || b != "admin" {
		t.Errorf("after handing admin over: ann %s, bob %s; want viewer and admin", a, b)
	}
}

// The groups of a user are their SCIM groups and their latest sign-in's
// claim together: a sign-in without the SCIM group keeps what SCIM gave,
// and a SCIM change keeps what the claim gave.
func TestSCIMGroupsAndSignInClaimTogether(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	p := newProject(t, w.s, w.admin)
	q := newProject(t, w.s, w.admin)
	w.configure(t, map[string]any{"group_mappings": []map[string]any{
		{"group": "scim-eng", "project_id": p.ID, "role": "editor"},
		{"group": "claim-ops", "project_id": q.ID, "role": "admin"},
	}})
	tok := scimToken(t, w.s, w.admin)
	ann := scimUser(t, w.s, tok, "ann@example.com")
	eng := scimGroup(t, w.s, tok, oktaGroup("scim-eng", ann))
	wantMembership(t, w.s, p.ID, ann, "editor", "sso", "through SCIM")

	w.op.addUser(opUser{Subject: "sub-ann", Email: "ann@example.com", EmailVerified: true, Name: "Ann"})
	if _, session := w.signIn(t, "sub-ann", "/"); session == nil {
		t.Fatal("sign-in without a groups claim failed")
	}
	wantMembership(t, w.s, p.ID, ann, "editor", "sso", "after a sign-in without a groups claim")

	w.op.addUser(opUser{Subject: "sub-ann", Email: "ann@example.com", EmailVerified: true, Name: "Ann", Groups: []string{"claim-ops"}})
	w.signIn(t, "sub-ann", "/")
	wantMembership(t, w.s, p.ID, ann, "editor", "sso", "after a sign-in with another group")
	wantMembership(t, w.s, q.ID, ann, "admin", "sso", "through the claim")

	patchGroup(t, w.s, tok, eng, oktaRemoveMember(ann))
	wantMembership(t, w.s, p.ID, ann, "", "", "out of the SCIM group")
	wantMembership(t, w.s, q.ID, ann, "admin", "sso", "the claim's, after a SCIM change")

	w.op.addUser(opUser{Subject: "sub-ann", Email: "ann@example.com", EmailVerified: true, Name: "Ann"})
	w.signIn(t, "sub-ann", "/")
	wantMembership(t, w.s, q.ID, ann, "", "", "after a sign-in without the claim's group")

	// Deprovisioning forgets the claim too: provisioned again, the user
	// comes back without what their last sign-in's groups gave.
	w.op.addUser(opUser{Subject: "sub-ann", Email: "ann@example.com", EmailVerified: true, Name: "Ann", Groups: []string{"claim-ops"}})
	w.signIn(t, "sub-ann", "/")
	wantMembership(t, w.s, q.ID, ann, "admin", "sso", "through the claim again")
	scimMust(t, w.s, tok, "DELETE", "/scim/v2/Users/"+ann, nil, http.StatusNoContent)
	wantMembership(t, w.s, q.ID, ann, "", "", "after the user's DELETE")
	if again := scimUser(t, w.s, tok, "ann@example.com"); again != ann {
		t.Fatalf("provisioned again as %s, want %s", again, ann)
	}
	wantMembership(t, w.s, q.ID, ann, "", "", "provisioned again")
}

// Without single sign-on there are no mappings: SCIM groups change no
// membership and no workspace role.
func TestSCIMGroupsWithoutSSOChangeNothing(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, nil)
	_, admin := s.User(t, "admin@example.com", "admin")
	p := newProject(t, s, admin)
	tok := scimToken(t, s, admin)
	ann := scimUser(t, s, tok, "ann@example.com")
	bob := scimUser(t, s, tok, "bob@example.com")
	s.Member(t, p.ID, mustInt(t, bob), "editor")
	// A membership an earlier mapping made stays too.
	if _, err := s.DB(t).Exec(context.Background(),
		`INSERT INTO project_members (project_id, user_id, role, source) VALUES ($1, $2, 'viewer', 'sso')`, p.ID, mustInt(t, ann)); err != nil {
		t.Fatal(err)
	}
	gid := scimGroup(t, s, tok, oktaGroup("admins", ann, bob))
	patchGroup(t, s, tok, gid, oktaRename(gid, "editors"), oktaRemoveMember(ann))
	scimMust(t, s, tok, "DELETE", "/scim/v2/Groups/"+gid, nil, http.StatusNoContent)
	wantMembership(t, s, p.ID, ann, "viewer", "sso", "ann after group changes without SSO")
	wantMembership(t, s, p.ID, bob, "editor", "manual", "bob after group changes without SSO")
	for _, u := range []string{ann, bob} {
		if got := workspaceRole(t, s, u); got != "viewer" {
			t.Errorf("user %s: workspace role %s, want viewer", u, got)
		}
	}
}

// A membership a SCIM change gives or takes applies to the user's very next
// request with their personal access token.
func TestSCIMGroupChangeAppliesToTheNextRequest(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t, nil)
	p := newProject(t, w.s, w.admin)
	w.configure(t, map[string]any{"group_mappings": []map[string]any{{"group": "Flag Readers", "project_id": p.ID, "role": "viewer"}}})
	tok := scimToken(t, w.s, w.admin)
	uid := scimMust(t, w.s, tok, "POST", "/scim/v2/Users", entraUser("reader@contoso.com"), http.StatusCreated)["id"].(string)
	pat := w.s.Token(t, mustInt(t, uid), "read_write", nil)
	flags := "/api/environments/" + p.Environments[0].ID.String() + "/flags"
	read := func(when string, want int) {
		t.Helper()
		if status, raw := call(t, w.s, pat, "GET", flags, nil); status != want {
			t.Errorf("%s: GET flags = %d %s, want %d", when, status, raw, want)
		}
	}
	gid := scimGroup(t, w.s, tok, entraGroup("Flag Readers"))
	read("before joining the group", http.StatusNotFound)
	patchGroup(t, w.s, tok, gid, entraMembers("Add", uid))
	read("right after joining the group", http.StatusOK)
	patchGroup(t, w.s, tok, gid, entraMembers("Remove", uid))
	read("right after leaving the group", http.StatusNotFound)
}

// Reactivating a user by hand (PATCH /api/users/{id}) applies the group
// rules as they are now, as SCIM's reactivation does: a mapping and an admin
// group configured while the user was away take effect on their return, and
// the answer shows the role the rules gave.
func TestReactivationByHandAppliesGroupRules(t *testing.T) {
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
	wantMembership(t, w.s, p.ID, ann, "", "", "rules changed while away")
	if got := workspaceRole(t, w.s, ann); got != "viewer" {
		t.Fatalf("while away: workspace role %s, want viewer", got)
	}

	var u struct {
		Role   string `json:"role"`
		Active bool   `json:"active"`
	}
	must(t, w.s, w.admin, "PATCH", "/api/users/"+ann, map[string]bool{"active": true}, http.StatusOK, &u)
	wantMembership(t, w.s, p.ID, ann, "editor", "sso", "reactivated by hand")
	if !u.Active || u.Role != "admin" || workspaceRole(t, w.s, ann) != "admin" {
		t.Errorf("reactivated: answer active=%v role=%s, stored role %s; want true, admin, admin", u.Active, u.Role, workspaceRole(t, w.s, ann))
	}
}
