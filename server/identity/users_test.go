package identity_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// One active workspace admin always remains (docs/reference/identity.md,
// Invariants), however the removals and deactivations of admins race. The caller here is a principal the
// database does not know as an admin, so that exactly the two admins below
// count, and its own authentication cannot change mid-test as it would over
// HTTP.
func TestLastAdminUnderConcurrency(t *testing.T) {
	t.Parallel()
	svc, pool, _ := newService(t)
	ctx := t.Context()
	if err := svc.Seed(ctx, identity.SeedConfig{}); err != nil {
		t.Fatal(err)
	}
	caller := &auth.Principal{Kind: auth.KindUser, UserID: -1, Email: "ops@example.com", Role: auth.RoleAdmin}
	viewer, inactive := auth.RoleViewer, false
	remove := map[string]func(id int64) error{
		"deactivate": func(id int64) error {
			_, err := svc.UpdateUser(ctx, caller, id, identity.UserPatch{Active: &inactive})
			return err
		},
		"delete": func(id int64) error { return svc.DeleteUser(ctx, caller, id) },
		"demote": func(id int64) error {
			_, err := svc.UpdateUser(ctx, caller, id, identity.UserPatch{Role: &viewer})
			return err
		},
	}
	for round, ops := range [][2]string{
		{"delete", "delete"}, {"demote", "demote"}, {"delete", "demote"}, {"demote", "delete"},
		{"deactivate", "deactivate"}, {"deactivate", "delete"}, {"demote", "deactivate"},
	} {
		t.Run(fmt.Sprintf("%s and %s", ops[0], ops[1]), func(t *testing.T) {
			if _, err := pool.Exec(ctx, `UPDATE users SET role = 'viewer'`); err != nil {
				t.Fatal(err)
			}
			var ids [2]int64
			for i := range ids {
				u, err := svc.CreateUser(ctx, caller, identity.UserInput{
					Name: "Admin", Email: fmt.Sprintf("admin%d-%d@example.com", round, i), Role: auth.RoleAdmin, Password: "long enough",
				})
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = u.ID
			}
			var errs [2]error
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[i] = remove[ops[i]](ids[i])
				}()
			}
			close(start)
			wg.Wait()
			succeeded := 0
			for _, err := range errs {
				switch {
				case err == nil:
					succeeded++
				case apperr.KindOf(err) != apperr.Invalid:
					t.Errorf("refusal %v, want Invalid", err)
				}
			}
			if succeeded != 1 {
				t.Errorf("%d of the two removals succeeded (%v), want exactly 1", succeeded, errs)
			}
			var admins int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM users WHERE role = 'admin' AND active`).Scan(&admins); err != nil || admins != 1 {
				t.Errorf("%d admins left (%v), want 1", admins, err)
			}
		})
	}
}

// Deactivated admins do not count towards the last admin: with one active
// admin left, demoting, deleting or deactivating that one is invalid, while a
// deactivated admin may be deleted or demoted. Nobody deactivates themself.
func TestOnlyActiveAdminsCount(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	ctx := t.Context()
	boot := &auth.Principal{Kind: auth.KindUser, UserID: -1, Role: auth.RoleAdmin}
	var ids [3]int64
	for i := range ids {
		u, err := svc.CreateUser(ctx, boot, identity.UserInput{Name: "A", Email: fmt.Sprintf("a%d@example.com", i), Role: auth.RoleAdmin, Password: "long enough"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = u.ID
	}
	active, inactive, viewer := true, false, auth.RoleViewer
	self := &auth.Principal{Kind: auth.KindUser, UserID: ids[0], Role: auth.RoleAdmin}
	if _, err := svc.UpdateUser(ctx, self, ids[0], identity.UserPatch{Active: &inactive}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("deactivating yourself: %v, want Invalid", err)
	}
	if _, err := svc.UpdateUser(ctx, self, ids[0], identity.UserPatch{Active: &active}); err != nil {
		t.Errorf("reactivating yourself, a no-op: %v", err)
	}
	for _, id := range ids[1:] {
		u, err := svc.UpdateUser(ctx, self, id, identity.UserPatch{Active: &inactive})
		if err != nil || u.Active {
			t.Fatalf("deactivating admin %d: %+v %v", id, u, err)
		}
	}
	// ids[0] is the last active admin: boot stands for a caller the
	// database does not know, as a request already authenticated would.
	if _, err := svc.UpdateUser(ctx, boot, ids[0], identity.UserPatch{Active: &inactive}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("deactivating the last active admin: %v, want Invalid", err)
	}
	if _, err := svc.UpdateUser(ctx, boot, ids[0], identity.UserPatch{Role: &viewer}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("demoting the last active admin: %v, want Invalid", err)
	}
	if err := svc.DeleteUser(ctx, boot, ids[0]); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("deleting the last active admin: %v, want Invalid", err)
	}
	if _, err := svc.UpdateUser(ctx, self, ids[1], identity.UserPatch{Role: &viewer}); err != nil {
		t.Errorf("demoting a deactivated admin: %v", err)
	}
	if err := svc.DeleteUser(ctx, self, ids[2]); err != nil {
		t.Errorf("deleting a deactivated admin: %v", err)
	}
	u, err := svc.UpdateUser(ctx, self, ids[1], identity.UserPatch{Active: &active})
	if err != nil || !u.Active || u.SsoLinked {
		t.Errorf("reactivating: %+v %v, want active and not linked", u, err)
	}
}

// Nobody deletes themself, and nobody without the workspace admin role
// manages users; a read_only token reads the list but changes nothing.
func TestUserManagementGuards(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	ctx := t.Context()
	boot := &auth.Principal{Kind: auth.KindUser, UserID: -1, Role: auth.RoleAdmin}
	admin, err := svc.CreateUser(ctx, boot, identity.UserInput{Name: "A", Email: "a@example.com", Role: auth.RoleAdmin, Password: "long enough"})
	if err != nil {
		t.Fatal(err)
	}
	self := &auth.Principal{Kind: auth.KindUser, UserID: admin.ID, Role: auth.RoleAdmin}
	if err := svc.DeleteUser(ctx, self, admin.ID); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("deleting yourself: %v, want Invalid", err)
	}
	readOnly := &auth.Principal{Kind: auth.KindUser, UserID: admin.ID, Role: auth.RoleAdmin, ReadOnly: true}
	if _, err := svc.ListUsers(ctx, readOnly); err != nil {
		t.Errorf("read_only admin listing users: %v", err)
	}
	editor := &auth.Principal{Kind: auth.KindUser, UserID: 99, Role: auth.RoleEditor}
	key := &auth.Principal{Kind: auth.KindSDKKey, KeyPrefix: "sk_live_abcd"}
	for name, p := range map[string]*auth.Principal{"read_only token": readOnly, "editor": editor, "SDK key": key, "anonymous": nil} {
		want := apperr.Forbidden
		if p == nil {
			want = apperr.Unauthenticated
		}
		if _, err := svc.CreateUser(ctx, p, identity.UserInput{Name: "B", Email: "b@example.com", Role: auth.RoleViewer, Password: "long enough"}); apperr.KindOf(err) != want {
			t.Errorf("%s creating a user: %v, want %v", name, err, want)
		}
		if err := svc.DeleteUser(ctx, p, admin.ID); apperr.KindOf(err) != want {
			t.Errorf("%s deleting a user: %v, want %v", name, err, want)
		}
	}
}
