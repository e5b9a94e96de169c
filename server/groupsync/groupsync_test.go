package groupsync_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/groupsync"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/store"
)

func TestRulesMatchGroupsExactly(t *testing.T) {
	t.Parallel()
	p1, p2 := uuid.New(), uuid.New()
	rules := groupsync.Rules{
		Mappings: []groupsync.Mapping{
			{Group: "eng", ProjectID: p1, Role: "editor"},
			{Group: "leads", ProjectID: p1, Role: "admin"},
			{Group: "support", ProjectID: p1, Role: "viewer"},
			{Group: "support", ProjectID: p2, Role: "viewer"},
		},
		AdminGroups: []string{"sw-admins"},
	}
	for _, tc := range []struct {
		name   string
		groups []string
		admin  bool
		roles  map[uuid.UUID]string
	}{
		{"no groups", nil, false, map[uuid.UUID]string{}},
		{"one mapped group", []string{"eng"}, false, map[uuid.UUID]string{p1: "editor"}},
		{"the highest role per project", []string{"support", "leads", "eng"}, false, map[uuid.UUID]string{p1: "admin", p2: "viewer"}},
		{"an admin group", []string{"sw-admins", "other"}, true, map[uuid.UUID]string{}},
		{"names match in their letter case only", []string{"ENG", "Sw-Admins"}, false, map[uuid.UUID]string{}},
		{"no trimming either", []string{" eng"}, false, map[uuid.UUID]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := rules.IsAdmin(tc.groups); got != tc.admin {
				t.Errorf("IsAdmin(%q) = %v, want %v", tc.groups, got, tc.admin)
			}
			if diff := cmp.Diff(tc.roles, rules.ProjectRoles(tc.groups)); diff != "" {
				t.Errorf("ProjectRoles(%q) (-want +got):\n%s", tc.groups, diff)
			}
		})
	}
}

// world is a database with two projects, SSO settings and helpers to
// arrange and read users, groups and memberships.
type world struct {
	t        *testing.T
	pool     *pgxpool.Pool
	p1, p2   uuid.UUID
	settings bool
}

func newWorld(t *testing.T, withSettings bool) *world {
	t.Helper()
	w := &world{t: t, pool: testenv.Pool(t), settings: withSettings}
	w.p1, w.p2 = w.project("one"), w.project("two")
	if withSettings {
		mappings, err := json.Marshal([]groupsync.Mapping{
			{Group: "eng", ProjectID: w.p1, Role: "editor"},
			{Group: "leads", ProjectID: w.p1, Role: "admin"},
			{Group: "support", ProjectID: w.p2, Role: "viewer"},
		})
		if err != nil {
			t.Fatal(err)
		}
		w.exec(`INSERT INTO workspace_sso (issuer, client_id, client_secret_sealed, scopes, groups_claim,
			allowed_email_domains, auto_provision, group_mappings, admin_groups, password_login)
			VALUES ('https://idp.example.com', 'c', '\x00', '{openid}', 'groups', '{}', true, $1, '{sw-admins}', 'enabled')`, mappings)
	}
	return w
}

func (w *world) exec(sql string, args ...any) {
	w.t.Helper()
	if _, err := w.pool.Exec(context.Background(), sql, args...); err != nil {
		w.t.Fatalf("%s: %v", sql, err)
	}
}

func (w *world) project(slug string) uuid.UUID {
	w.t.Helper()
	var id uuid.UUID
	if err := w.pool.QueryRow(context.Background(), `INSERT INTO projects (name, slug) VALUES ($1, $1) RETURNING id`, slug).Scan(&id); err != nil {
		w.t.Fatal(err)
	}
	return id
}

// user creates a user with role, active or not, and the groups of their
// latest sign-in.
func (w *world) user(email, role string, active bool, ssoGroups ...string) int64 {
	w.t.Helper()
	if ssoGroups == nil {
		ssoGroups = []string{}
	}
	var id int64
	err := w.pool.QueryRow(context.Background(),
		`INSERT INTO users (name, email, password_hash, role, active, sso_groups) VALUES ($1, $1, '', $2, $3, $4) RETURNING id`,
		email, role, active, ssoGroups).Scan(&id)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// group creates a SCIM group with members.
func (w *world) group(name string, members ...int64) {
	w.t.Helper()
	var gid uuid.UUID
	if err := w.pool.QueryRow(context.Background(), `INSERT INTO scim_groups (display_name) VALUES ($1) RETURNING id`, name).Scan(&gid); err != nil {
		w.t.Fatal(err)
	}
	for _, m := range members {
		w.exec(`INSERT INTO scim_group_members (group_id, user_id) VALUES ($1, $2)`, gid, m)
	}
}

func (w *world) apply(ids ...int64) groupsync.Result {
	w.t.Helper()
	res, err := store.WithTxV(context.Background(), w.pool, func(q *db.Queries) (groupsync.Result, error) {
		if err := q.LockWorkspace(context.Background()); err != nil {
			return groupsync.Result{}, err
		}
		return groupsync.Apply(context.Background(), q, nil, ids...)
	})
	if err != nil {
		w.t.Fatalf("apply: %v", err)
	}
	return res
}

// state is a user's workspace role and memberships as "project:role:source".
func (w *world) state(id int64) (string, []string) {
	w.t.Helper()
	var role string
	if err := w.pool.QueryRow(context.Background(), `SELECT role FROM users WHERE id = $1`, id).Scan(&role); err != nil {
		w.t.Fatal(err)
	}
	rows, err := w.pool.Query(context.Background(),
		`SELECT p.slug || ':' || m.role || ':' || m.source FROM project_members m JOIN projects p ON p.id = m.project_id
		 WHERE m.user_id = $1 ORDER BY 1`, id)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	ms := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			w.t.Fatal(err)
		}
		ms = append(ms, s)
	}
	return role, ms
}

func (w *world) want(id int64, role string, memberships ...string) {
	w.t.Helper()
	if memberships == nil {
		memberships = []string{}
	}
	gotRole, got := w.state(id)
	if gotRole != role {
		w.t.Errorf("user %d: workspace role %s, want %s", id, gotRole, role)
	}
	if diff := cmp.Diff(memberships, got); diff != "" {
		w.t.Errorf("user %d: memberships (-want +got):\n%s", id, diff)
	}
}

// A user's groups are their SCIM groups and their latest sign-in's groups
// together; only mapping-made memberships follow them.
func TestApplyUnionOfSCIMAndSignInGroups(t *testing.T) {
	t.Parallel()
	w := newWorld(t, true)
	w.user("root@example.com", "admin", true)
	both := w.user("both@example.com", "viewer", true, "support")
	scimOnly := w.user("scim@example.com", "viewer", true)
	claimOnly := w.user("claim@example.com", "viewer", true, "leads")
	hand := w.user("hand@example.com", "viewer", true, "leads")
	w.exec(`INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, 'viewer')`, w.p1, hand)
	w.group("eng", both, scimOnly)
	w.group("sw-admins", scimOnly)

	if res := w.apply(both, scimOnly, claimOnly, hand); len(res.KeptAdmins) != 0 {
		t.Errorf("kept admins %v, want none", res.KeptAdmins)
	}
	w.want(both, "viewer", "one:editor:sso", "two:viewer:sso")
	w.want(scimOnly, "admin", "one:editor:sso")
	w.want(claimOnly, "viewer", "one:admin:sso")
	w.want(hand, "viewer", "one:viewer:manual")

	// Leaving every group takes what the groups gave, and nothing else.
	w.exec(`DELETE FROM scim_group_members`)
	w.exec(`UPDATE users SET sso_groups = '{}'`)
	w.apply(both, scimOnly, claimOnly, hand)
	w.want(both, "viewer")
	w.want(scimOnly, "viewer")
	w.want(claimOnly, "viewer")
	w.want(hand, "viewer", "one:viewer:manual")
}

func TestApplyKeepsTheLastActiveAdmin(t *testing.T) {
	t.Parallel()
	w := newWorld(t, true)
	last := w.user("last@example.com", "admin", true)
	away := w.user("away@example.com", "admin", false)
	res := w.apply(last, away)
	if diff := cmp.Diff([]int64{last}, res.KeptAdmins); diff != "" {
		t.Errorf("kept admins (-want +got):\n%s", diff)
	}
	w.want(last, "admin")
	// A deactivated admin is no admin to keep: it goes without another.
	w.want(away, "viewer")

	// With a second active admin, the first goes too.
	second := w.user("second@example.com", "viewer", true)
	w.group("sw-admins", second)
	if res := w.apply(second, last); len(res.KeptAdmins) != 0 {
		t.Errorf("kept admins %v, want none", res.KeptAdmins)
	}
	w.want(second, "admin")
	w.want(last, "viewer")
}

func TestApplySkipsDeletedProjectsAndUnknownUsers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, true)
	w.user("root@example.com", "admin", true)
	u := w.user("u@example.com", "viewer", true, "eng", "support")
	w.exec(`DELETE FROM projects WHERE id = $1`, w.p2)
	w.apply(u, 424242)
	w.want(u, "viewer", "one:editor:sso")
}

// With single sign-on off there are no rules, and nothing changes: not even
// memberships earlier mappings made.
func TestApplyWithoutSettingsChangesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, false)
	u := w.user("u@example.com", "admin", true, "eng")
	w.exec(`INSERT INTO project_members (project_id, user_id, role, source) VALUES ($1, $2, 'viewer', 'sso')`, w.p2, u)
	w.group("sw-admins")
	w.apply(u)
	w.want(u, "admin", "two:viewer:sso")
}

// entries returns the audit trail's entries as "action resource_id
// project-slug before-role>after-role actor", in id order.
func (w *world) entries() []string {
	w.t.Helper()
	rows, err := w.pool.Query(context.Background(),
		`SELECT a.action || ' ' || a.resource_id || ' ' || coalesce(p.slug, '-') || ' ' ||
		        coalesce(convert_from(a.body, 'UTF8')::jsonb -> 'before' ->> 'role', '-') || '>' ||
		        coalesce(convert_from(a.body, 'UTF8')::jsonb -> 'after' ->> 'role', '-') || ' ' || a.actor_kind
		 FROM audit_trail a LEFT JOIN projects p ON p.id = a.project_id ORDER BY a.id`)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			w.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// Every membership and workspace role Apply changes is an entry of its
// transaction, by the context's actor; what it leaves alone is none.
func TestApplyRecordsEachChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t, true)
	w.user("root@example.com", "admin", true)
	u := w.user("u@example.com", "viewer", true, "eng", "support", "sw-admins")
	hand := w.user("hand@example.com", "viewer", true, "leads")
	w.exec(`INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, 'viewer')`, w.p1, hand)
	id, handID := strconv.FormatInt(u, 10), strconv.FormatInt(hand, 10)
	ctx := audit.WithActor(context.Background(), audit.Actor{Kind: audit.ActorSCIM, ID: audit.Str("7"), Label: audit.Str("scim_0123456")})
	apply := func() {
		t.Helper()
		err := store.WithTx(ctx, w.pool, func(q *db.Queries) error {
			if err := q.LockWorkspace(ctx); err != nil {
				return err
			}
			_, err := groupsync.Apply(ctx, q, nil, u, hand)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	apply()
	want := []string{
		"user.updated " + id + " - viewer>admin scim",
		"member.created " + id + " one ->editor scim",
		"member.created " + id + " two ->viewer scim",
	}
	// The two memberships come in project id order, random here.
	if diff := cmp.Diff(want, w.entries(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Fatalf("first apply (-want +got):\n%s", diff)
	}
	apply() // nothing changed since: nothing recorded
	if n := len(w.entries()); n != len(want) {
		t.Errorf("an apply that changed nothing recorded %d entries", n-len(want))
	}
	w.exec(`UPDATE users SET sso_groups = '{leads}' WHERE id = $1`, u)
	apply()
	// Removals, then the rest of the mappings, then demotions (after
	// every promotion of the same change).
	want = append(w.entries()[:3],
		"member.deleted "+id+" two viewer>- scim",
		"member.role_changed "+id+" one editor>admin scim",
		"user.updated "+id+" - admin>viewer scim",
	)
	if diff := cmp.Diff(want, w.entries()); diff != "" {
		t.Errorf("second apply (-want +got):\n%s", diff)
	}
	for _, e := range w.entries() {
		if strings.Contains(e, " "+handID+" ") {
			t.Errorf("the hand-made membership was recorded as changed: %s", e)
		}
	}
}
