package groupsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Mapping gives the members of an identity-provider group a role in a
// project.
type Mapping struct {
	Group     string    `json:"group"`
	ProjectID uuid.UUID `json:"project_id"`
	Role      string    `json:"role"`
}

// Rules are the group mappings and admin groups of the single sign-on
// settings. A group matches a mapping's group, or an admin group, when the
// two strings are equal: exactly, letter case included, as the provider
// sends them.
type Rules struct {
	Mappings    []Mapping
	AdminGroups []string
}

// RulesOf reads the rules of a settings row.
func RulesOf(row db.WorkspaceSso) (Rules, error) {
	var mappings []Mapping
	if err := json.Unmarshal(row.GroupMappings, &mappings); err != nil {
		return Rules{}, fmt.Errorf("decode group mappings: %w", err)
	}
	return Rules{Mappings: mappings, AdminGroups: row.AdminGroups}, nil
}

// Result reports what applying the rules left as it was although the rules
// said otherwise.
type Result struct {
	// KeptAdmins are users outside every admin group who stay workspace
	// admins because each is the last active one: taking it would lock the
	// workspace out of its own settings. Callers log them.
	KeptAdmins []int64
}

// Apply applies the stored rules to each user (see Rules.Apply) in the
// caller's transaction, recording what it changes in trail. With single
// sign-on off there are no rules, and it changes nothing: not even
// memberships earlier mappings made.
func Apply(ctx context.Context, q *db.Queries, trail *audit.Trail, userIDs ...int64) (Result, error) {
	if len(userIDs) == 0 {
		return Result{}, nil
	}
	row, err := q.GetWorkspaceSSO(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return Result{}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("get sso settings: %w", store.AdaptError(err))
	}
	rules, err := RulesOf(row)
	if err != nil {
		return Result{}, err
	}
	return rules.Apply(ctx, q, trail, userIDs...)
}

// Apply sets each user's workspace role and mapping-made project
// memberships from their groups, in the caller's transaction: the display
// names of their SCIM groups together with the groups of their latest
// sign-in's claim (users.sso_groups). Each user gets the highest mapped role
// in each project a group of theirs maps to, and loses the mapping-made
// membership of every other project; memberships made by hand are never
// changed. When admin groups are configured, a member of one becomes a
// workspace admin and anyone else stops being one, except the last active
// admin (Result.KeptAdmins).
//
// Every change is an entry of trail in the caller's transaction, by the
// context's actor (audit.WithActor): member.created, member.role_changed
// and member.deleted for memberships, user.updated for a workspace role.
//
// It locks the users' rows in id order before it reads their groups, so
// that concurrent changes of two groups with a member in common apply one
// after the other, the second seeing the first. A caller that may change
// admins holds the workspace lock (LockWorkspace), taken before any user
// row, as every workspace-admin invariant is kept (identity's users).
// Unknown users are skipped.
func (r Rules) Apply(ctx context.Context, q *db.Queries, trail *audit.Trail, userIDs ...int64) (Result, error) {
	var res Result
	if len(userIDs) == 0 {
		return res, nil
	}
	users, err := q.LockUsers(ctx, userIDs)
	if err != nil {
		return res, fmt.Errorf("lock users: %w", store.AdaptError(err))
	}
	var projects []uuid.UUID
	if len(r.Mappings) > 0 {
		if projects, err = q.ListProjectIDs(ctx); err != nil {
			return res, fmt.Errorf("list projects: %w", store.AdaptError(err))
		}
	}
	// Promotions before demotions: when one change moves admin from one
	// user to another (a group's members replaced), the one leaving is not
	// kept as the last admin only because the other was not promoted yet.
	var demote []db.LockUsersRow
	for _, u := range users {
		groups, err := q.ListUserGroups(ctx, u.ID)
		if err != nil {
			return res, fmt.Errorf("list groups of user %d: %w", u.ID, store.AdaptError(err))
		}
		if len(r.AdminGroups) > 0 {
			switch admin := r.IsAdmin(groups); {
			case admin && u.Role != auth.RoleAdmin:
				if err := setRole(ctx, q, trail, u.ID, auth.RoleAdmin); err != nil {
					return res, err
				}
			case !admin && u.Role == auth.RoleAdmin:
				demote = append(demote, u)
			}
		}
		if err := r.applyMappings(ctx, q, trail, u.ID, groups, projects); err != nil {
			return res, err
		}
	}
	for _, u := range demote {
		kept, err := demoteAdmin(ctx, q, trail, u)
		if err != nil {
			return res, err
		}
		if kept {
			res.KeptAdmins = append(res.KeptAdmins, u.ID)
		}
	}
	return res, nil
}

// IsAdmin reports whether groups make their member a workspace admin.
func (r Rules) IsAdmin(groups []string) bool {
	for _, g := range groups {
		if slices.Contains(r.AdminGroups, g) {
			return true
		}
	}
	return false
}

// ProjectRoles returns the role groups give in each mapped project: the
// highest of the roles their mappings give there.
func (r Rules) ProjectRoles(groups []string) map[uuid.UUID]string {
	want := map[uuid.UUID]string{}
	for _, m := range r.Mappings {
		if slices.Contains(groups, m.Group) && roleRank[m.Role] > roleRank[want[m.ProjectID]] {
			want[m.ProjectID] = m.Role
		}
	}
	return want
}

// roleRank orders project roles, so that a user in several mapped groups
// gets the highest of their roles.
var roleRank = map[string]int{auth.RoleViewer: 1, auth.RoleEditor: 2, auth.RoleAdmin: 3}

// demoteAdmin takes workspace admin from a user outside every admin group:
// they become a viewer, as a user provisioned outside the admin groups is.
// It never takes admin from the last active admin, and reports that it kept
// them. A deactivated admin does not count as one, so taking their admin
// needs no other.
func demoteAdmin(ctx context.Context, q *db.Queries, trail *audit.Trail, u db.LockUsersRow) (kept bool, err error) {
	if u.Active {
		n, err := q.CountWorkspaceAdmins(ctx)
		if err != nil {
			return false, fmt.Errorf("count admins: %w", store.AdaptError(err))
		}
		if n <= 1 {
			return true, nil
		}
	}
	return false, setRole(ctx, q, trail, u.ID, auth.RoleViewer)
}

// setRole sets a user's workspace role and records it as user.updated.
func setRole(ctx context.Context, q *db.Queries, trail *audit.Trail, id int64, role string) error {
	before, err := LockUser(ctx, q, id)
	if err != nil {
		return err
	}
	if before.Role == role {
		return nil
	}
	if err := q.SetUserRole(ctx, db.SetUserRoleParams{ID: id, Role: role}); err != nil {
		return fmt.Errorf("set workspace role: %w", store.AdaptError(err))
	}
	after := before
	after.Role = role
	return RecordUser(ctx, q, trail, "user.updated", &before, &after)
}

// applyMappings sets the user's mapping-made memberships: the highest mapped
// role per project, and none where no group of theirs maps any more.
// projects are the projects that exist; a mapping to one deleted since is
// skipped. Each change is recorded in trail.
func (r Rules) applyMappings(ctx context.Context, q *db.Queries, trail *audit.Trail, userID int64, groups []string, projects []uuid.UUID) error {
	want := r.ProjectRoles(groups)
	have, err := q.ListSSOMemberships(ctx, userID)
	if err != nil {
		return fmt.Errorf("list memberships: %w", store.AdaptError(err))
	}
	// The user as the entries name them, read at the first change.
	var user *User
	record := func(action string, project uuid.UUID, before, after string) error {
		if user == nil {
			u, err := LockUser(ctx, q, userID)
			if err != nil {
				return err
			}
			user = &u
		}
		return recordMember(ctx, q, trail, action, project, *user, before, after)
	}
	current := map[uuid.UUID]db.ListSSOMembershipsRow{}
	for _, m := range have {
		current[m.ProjectID] = m
		if _, ok := want[m.ProjectID]; ok || m.Source != "sso" {
			continue
		}
		n, err := q.RemoveSSOMembership(ctx, db.RemoveSSOMembershipParams{ProjectID: m.ProjectID, UserID: userID})
		if err != nil {
			return fmt.Errorf("remove membership: %w", store.AdaptError(err))
		}
		if n > 0 {
			if err := record("member.deleted", m.ProjectID, m.Role, ""); err != nil {
				return err
			}
		}
	}
	// In project order, so that the entries of one change come out alike
	// every time.
	pids := make([]uuid.UUID, 0, len(want))
	for pid := range want {
		pids = append(pids, pid)
	}
	slices.SortFunc(pids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	for _, pid := range pids {
		role := want[pid]
		if !slices.Contains(projects, pid) {
			continue
		}
		n, err := q.UpsertSSOMembership(ctx, db.UpsertSSOMembershipParams{ProjectID: pid, UserID: userID, Role: role})
		if err != nil {
			return fmt.Errorf("set membership: %w", store.AdaptError(err))
		}
		if n == 0 {
			continue // made by hand, or already this role
		}
		action, before := "member.created", ""
		if m, ok := current[pid]; ok {
			action, before = "member.role_changed", m.Role
		}
		if err := record(action, pid, before, role); err != nil {
			return err
		}
	}
	return nil
}
