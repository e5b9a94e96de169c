package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// The principals of the role matrix, in the order of every want row.
const (
	wsAdmin     = iota // workspace admin, not a member of the project
	projAdmin          // workspace editor, project admin
	projEditor         // project editor
	projViewer         // project viewer
	nonMember          // workspace editor without membership
	projAdminRO        // read_only token of the project admin
	wsAdminRO          // read_only token of the workspace admin
	sdkKey             // the project's SDK key
	nPrincipals
)

var principalNames = [nPrincipals]string{
	"workspace admin", "project admin", "editor", "viewer", "non-member",
	"read_only token of project admin", "read_only token of workspace admin", "SDK key",
}

// roleWorld is one project with a member of every role, and a second project
// none of them belongs to.
type roleWorld struct {
	s       *apptest.Server
	admin   string // the workspace admin's read_write token, for arranging
	creds   [nPrincipals]string
	users   [nPrincipals]int64 // user behind each credential; 0 for the SDK key
	project projectBody
	other   projectBody
}

func newRoleWorld(t *testing.T) *roleWorld {
	t.Helper()
	s := apptest.Start(t, nil)
	s.DB(t) // open the pool for the whole test, not only the first subtest
	w := &roleWorld{s: s}
	w.users[wsAdmin], w.creds[wsAdmin] = s.User(t, "wsadmin@example.com", "admin")
	w.admin = w.creds[wsAdmin]
	w.project = newProject(t, s, w.admin)
	w.other = newProject(t, s, w.admin)
	for who, role := range map[int]string{projAdmin: "admin", projEditor: "editor", projViewer: "viewer", nonMember: ""} {
		workspaceRole := "editor"
		if who == projViewer {
			workspaceRole = "viewer"
		}
		w.users[who], w.creds[who] = s.User(t, principalNames[who][:4]+uniq("")+"@example.com", workspaceRole)
		if role != "" {
			s.Member(t, w.project.ID, w.users[who], role)
		}
	}
	w.users[projAdminRO] = w.users[projAdmin]
	w.creds[projAdminRO] = s.Token(t, w.users[projAdmin], "read_only", nil)
	w.users[wsAdminRO] = w.users[wsAdmin]
	w.creds[wsAdminRO] = s.Token(t, w.users[wsAdmin], "read_only", nil)
	w.creds[sdkKey] = w.project.SDKKey.Key
	return w
}

// plainUser creates a user directly, without the slow password hash: a
// target for membership and user management, never a caller.
func (w *roleWorld) plainUser(t *testing.T) int64 {
	t.Helper()
	var id int64
	email := uniq("target") + "@example.com"
	if err := w.s.DB(t).QueryRow(context.Background(),
		`INSERT INTO users (name, email, password_hash, role) VALUES ($1, $1, 'x', 'viewer') RETURNING id`, email).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (w *roleWorld) projectPath(p projectBody) string { return "/api/projects/" + p.ID.String() }

// Access control of every management route for every kind of caller
// (docs/reference/identity.md, Roles, Not found, not forbidden, and Server SDK
// keys). Each case arranges a fresh target of its own, so that the cases can
// run at once.
func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	w := newRoleWorld(t)
	const (
		ok  = http.StatusOK
		del = http.StatusNoContent
		no  = http.StatusForbidden
		nf  = http.StatusNotFound
	)
	// Rows of wants, in principal order: workspace admin, project admin,
	// editor, viewer, non-member, read_only project admin, read_only
	// workspace admin, SDK key.
	var (
		anyUser        = [nPrincipals]int{ok, ok, ok, ok, ok, ok, ok, no}
		anyUserWrite   = [nPrincipals]int{ok, ok, ok, ok, ok, no, no, no}
		anyUserDelete  = [nPrincipals]int{del, del, del, del, del, no, no, no}
		workspaceWrite = [nPrincipals]int{ok, no, no, no, no, no, no, no}
		workspaceDel   = [nPrincipals]int{del, no, no, no, no, no, no, no}
		workspaceRead  = [nPrincipals]int{ok, no, no, no, no, no, ok, no}
		projAdminRead  = [nPrincipals]int{ok, ok, no, no, nf, ok, ok, no}
		projAdminWrite = [nPrincipals]int{ok, ok, no, no, nf, no, no, no}
		projAdminDel   = [nPrincipals]int{del, del, no, no, nf, no, no, no}
		otherProject   = [nPrincipals]int{ok, nf, nf, nf, nf, nf, ok, no}
		otherProjWrite = [nPrincipals]int{ok, nf, nf, nf, nf, nf, no, no}
	)
	p := w.projectPath(w.project)
	freshEnv := func(t *testing.T) string {
		return p + "/environments/" + newEnv(t, w.s, w.admin, w.project.ID).ID.String()
	}
	freshMember := func(t *testing.T) string {
		id := w.plainUser(t)
		w.s.Member(t, w.project.ID, id, "viewer")
		return p + "/members/" + itoa(id)
	}
	cases := []struct {
		name    string
		method  string
		arrange func(t *testing.T, who int) (path string, body any)
		want    [nPrincipals]int
	}{
		// Projects.
		{"list projects", "GET", func(*testing.T, int) (string, any) { return "/api/projects", nil }, anyUser},
		{"create project", "POST", func(*testing.T, int) (string, any) {
			return "/api/projects", map[string]string{"name": uniq("Created")}
		}, workspaceWrite},
		{"rename project", "PATCH", func(t *testing.T, _ int) (string, any) {
			return w.projectPath(newProject(t, w.s, w.admin)), map[string]string{"name": uniq("Renamed")}
		}, workspaceWrite},
		{"rename own project", "PATCH", func(*testing.T, int) (string, any) {
			return p, map[string]string{"name": w.project.Name}
		}, [nPrincipals]int{ok, no, no, no, no, no, no, no}},
		{"delete project", "DELETE", func(t *testing.T, _ int) (string, any) {
			return w.projectPath(newProject(t, w.s, w.admin)), nil
		}, workspaceDel},

		// Members.
		{"list members", "GET", func(*testing.T, int) (string, any) { return p + "/members", nil }, projAdminRead},
		{"add member", "POST", func(t *testing.T, _ int) (string, any) {
			return p + "/members", map[string]any{"user_id": w.plainUser(t), "role": "editor"}
		}, projAdminWrite},
		{"change member role", "PATCH", func(t *testing.T, _ int) (string, any) {
			return freshMember(t), map[string]string{"role": "editor"}
		}, projAdminWrite},
		{"remove member", "DELETE", func(t *testing.T, _ int) (string, any) { return freshMember(t), nil }, projAdminDel},
		{"list members of another project", "GET", func(*testing.T, int) (string, any) {
			return w.projectPath(w.other) + "/members", nil
		}, otherProject},

		// Environments.
		{"list environments", "GET", func(*testing.T, int) (string, any) { return p + "/environments", nil }, projAdminRead},
		{"create environment", "POST", func(*testing.T, int) (string, any) {
			slug := uniq("env")
			return p + "/environments", map[string]string{"name": slug, "slug": slug}
		}, projAdminWrite},
		{"update environment", "PATCH", func(t *testing.T, _ int) (string, any) {
			return freshEnv(t), map[string]string{"color": "#123456"}
		}, projAdminWrite},
		{"delete environment", "DELETE", func(t *testing.T, _ int) (string, any) { return freshEnv(t), nil }, projAdminDel},
		{"set default environment", "POST", func(t *testing.T, _ int) (string, any) { return freshEnv(t) + "/default", nil }, projAdminWrite},
		{"require approval", "POST", func(t *testing.T, _ int) (string, any) {
			return freshEnv(t) + "/require-approval", map[string]bool{"require_approval": true}
		}, projAdminWrite},
		{"list environments of another project", "GET", func(*testing.T, int) (string, any) {
			return w.projectPath(w.other) + "/environments", nil
		}, otherProject},
		{"update environment of another project", "PATCH", func(t *testing.T, _ int) (string, any) {
			return w.projectPath(w.other) + "/environments/" + w.other.envBySlug(t, "staging").String(), map[string]string{}
		}, otherProjWrite},

		// SDK keys.
		{"list SDK keys", "GET", func(*testing.T, int) (string, any) { return p + "/keys", nil }, projAdminRead},
		{"create SDK key", "POST", func(t *testing.T, _ int) (string, any) {
			return p + "/keys", map[string]any{"name": "k", "environment_id": w.project.envBySlug(t, "staging")}
		}, projAdminWrite},
		{"revoke SDK key", "DELETE", func(t *testing.T, _ int) (string, any) {
			return p + "/keys/" + itoa(newKey(t, w.s, w.admin, w.project.ID, w.project.envBySlug(t, "staging")).ID), nil
		}, projAdminDel},
		{"list SDK keys of another project", "GET", func(*testing.T, int) (string, any) {
			return w.projectPath(w.other) + "/keys", nil
		}, otherProject},

		// Personal access tokens: the caller's own.
		{"list tokens", "GET", func(*testing.T, int) (string, any) { return "/api/tokens", nil }, anyUser},
		{"create read_only token", "POST", func(*testing.T, int) (string, any) {
			return "/api/tokens", map[string]string{"name": "ro", "scope": "read_only"}
		}, anyUser},
		{"create read_write token", "POST", func(*testing.T, int) (string, any) {
			return "/api/tokens", map[string]string{"name": "rw", "scope": "read_write"}
		}, anyUserWrite},
		{"delete own token", "DELETE", func(t *testing.T, who int) (string, any) {
			user := w.users[who]
			if user == 0 {
				user = w.users[wsAdmin]
			}
			var id int64
			w.s.Token(t, user, "read_only", nil)
			if err := w.s.DB(t).QueryRow(context.Background(),
				`SELECT max(id) FROM personal_access_tokens WHERE user_id = $1`, user).Scan(&id); err != nil {
				t.Fatal(err)
			}
			return "/api/tokens/" + itoa(id), nil
		}, anyUserDelete},

		// Users.
		{"list users", "GET", func(*testing.T, int) (string, any) { return "/api/users", nil }, workspaceRead},
		{"create user", "POST", func(*testing.T, int) (string, any) {
			return "/api/users", map[string]string{"name": "N", "email": uniq("new") + "@example.com", "role": "viewer", "password": "long enough"}
		}, workspaceWrite},
		{"update user", "PATCH", func(t *testing.T, _ int) (string, any) {
			return "/api/users/" + itoa(w.plainUser(t)), map[string]string{"role": "editor"}
		}, workspaceWrite},
		{"delete user", "DELETE", func(t *testing.T, _ int) (string, any) { return "/api/users/" + itoa(w.plainUser(t)), nil }, workspaceDel},
	}
	for _, c := range cases {
		for who := range nPrincipals {
			t.Run(c.name+"/"+principalNames[who], func(t *testing.T) {
				t.Parallel()
				path, body := c.arrange(t, who)
				status, raw := call(t, w.s, w.creds[who], c.method, path, body)
				if status != c.want[who] {
					t.Errorf("%s %s as %s = %d %s, want %d", c.method, path, principalNames[who], status, raw, c.want[who])
				}
			})
		}
	}
}

// A project that does not exist answers the same as one the caller may not
// see (404 for members, never a leak); workspace routes answer 403 to
// everyone but workspace admins, whatever the project.
func TestProjectExistenceNotLeaked(t *testing.T) {
	t.Parallel()
	w := newRoleWorld(t)
	unknown := "/api/projects/" + uuid.NewString()
	for _, who := range []int{projAdmin, projEditor, projViewer, nonMember} {
		for _, suffix := range []string{"/members", "/environments", "/keys"} {
			hidden, _ := call(t, w.s, w.creds[who], "GET", w.projectPath(w.other)+suffix, nil)
			missing, _ := call(t, w.s, w.creds[who], "GET", unknown+suffix, nil)
			if hidden != http.StatusNotFound || missing != http.StatusNotFound {
				t.Errorf("%s: GET …%s of a hidden project = %d, of a missing one = %d, want 404 both", principalNames[who], suffix, hidden, missing)
			}
		}
		hidden, _ := call(t, w.s, w.creds[who], "DELETE", w.projectPath(w.other), nil)
		missing, _ := call(t, w.s, w.creds[who], "DELETE", unknown, nil)
		if hidden != missing {
			t.Errorf("%s: DELETE of a hidden project = %d, of a missing one = %d, want the same", principalNames[who], hidden, missing)
		}
	}
}
