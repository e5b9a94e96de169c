package scim

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/store"
)

// Group is a provider's group with its members. Its members get roles
// through single sign-on's group mappings and admin groups, matched by
// displayName (groupsync; docs/scim.md, Groups and roles).
type Group struct {
	db.ScimGroup
	Members []db.ListSCIMGroupMembersRow
}

// groupState is a group as a request leaves it, before it is written.
type groupState struct {
	displayName string
	externalID  *string
	members     []int64 // user ids, in the order they were added
}

func (g *groupState) has(id int64) bool { return slices.Contains(g.members, id) }

func (g *groupState) add(id int64) {
	if !g.has(id) {
		g.members = append(g.members, id)
	}
}

func (g *groupState) remove(id int64) {
	g.members = slices.DeleteFunc(g.members, func(m int64) bool { return m == id })
}

// memberIDs reads a members value: an array of {"value": "<user id>"}, or
// one such object.
func memberIDs(v any) ([]int64, error) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		items = []any{x}
	case nil:
		return nil, nil
	default:
		return nil, errInvalidValue("members must be an array of objects with a value")
	}
	ids := make([]int64, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, errInvalidValue("members must be an array of objects with a value")
		}
		id, err := memberID(m["value"])
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func memberID(v any) (int64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, errInvalidValue("a member's value must be a user id string")
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errInvalidValue("no user %q", s)
	}
	return id, nil
}

// set applies one attribute with add (or, for members, replace when
// replace is set).
func (g *groupState) set(path string, value any, replace bool) error {
	p := strings.TrimPrefix(strings.ToLower(path), strings.ToLower(groupSchema)+":")
	switch p {
	case "displayname":
		s, err := stringValue(path, value)
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return errInvalidValue("displayName is required")
		}
		g.displayName = strings.TrimSpace(s)
	case "externalid":
		s, err := optString(path, value)
		if err != nil {
			return err
		}
		g.externalID = s
	case "members":
		ids, err := memberIDs(value)
		if err != nil {
			return err
		}
		if replace {
			g.members = nil
		}
		for _, id := range ids {
			g.add(id)
		}
	}
	return nil
}

func (g *groupState) setAll(m map[string]any, replace bool) error {
	for k, v := range m {
		if err := g.set(k, v, replace); err != nil {
			return err
		}
	}
	return nil
}

// applyGroupPatch applies a PATCH's operations in order (RFC 7644, section
// 3.5.2): add of members adds them, replace of members sets them, remove
// of members removes those its value lists, all of them without a value,
// or the one a `members[value eq "…"]` path names.
func applyGroupPatch(g *groupState, ops []patchOp) error {
	for _, op := range ops {
		v, err := op.decodeValue()
		if err != nil {
			return err
		}
		name := strings.ToLower(op.Op)
		switch name {
		case "add", "replace":
			replace := name == "replace"
			if op.Path == "" {
				m, ok := v.(map[string]any)
				if !ok {
					return errInvalidValue("an operation without a path needs an object value")
				}
				if err := g.setAll(m, replace); err != nil {
					return err
				}
				continue
			}
			if err := g.set(op.Path, v, replace); err != nil {
				return err
			}
		case "remove":
			if err := g.removePath(op.Path, v); err != nil {
				return err
			}
		default:
			return errInvalidValue("unknown operation %q", op.Op)
		}
	}
	return nil
}

func (g *groupState) removePath(path string, v any) error {
	if path == "" {
		return &Error{Status: 400, SCIMType: scimNoTarget, Detail: "remove needs a path"}
	}
	vp, bracketed, err := ParseValuePath(path)
	if err != nil {
		return err
	}
	if bracketed {
		if !strings.EqualFold(vp.Attr, "members") || !strings.EqualFold(vp.Filter.Attr, "value") || vp.Sub != "" {
			return errInvalidPath(path)
		}
		id, err := strconv.ParseInt(vp.Filter.Value, 10, 64)
		if err == nil {
			g.remove(id)
		}
		return nil // removing a member the group does not have changes nothing
	}
	switch strings.ToLower(path) {
	case "members":
		if v == nil {
			g.members = nil
			return nil
		}
		ids, err := memberIDs(v)
		if err != nil {
			return err
		}
		for _, id := range ids {
			g.remove(id)
		}
	case "externalid":
		g.externalID = nil
	case "displayname":
		return errInvalidValue("displayName is required")
	}
	return nil
}

// GetGroup returns a group by id.
func (s *Service) GetGroup(ctx context.Context, id string) (Group, error) {
	gid, err := uuid.Parse(id)
	if err != nil {
		return Group{}, errNotFound("group")
	}
	return getGroup(ctx, db.New(s.pool), gid)
}

func getGroup(ctx context.Context, q *db.Queries, id uuid.UUID) (Group, error) {
	g, err := q.GetSCIMGroup(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Group{}, errNotFound("group")
	}
	if err != nil {
		return Group{}, fmt.Errorf("get group: %w", store.AdaptError(err))
	}
	members, err := q.ListSCIMGroupMembers(ctx, []uuid.UUID{id})
	if err != nil {
		return Group{}, fmt.Errorf("list group members: %w", store.AdaptError(err))
	}
	return Group{ScimGroup: g, Members: members}, nil
}

// ListGroups returns one page of the groups the filter selects
// (displayName, case-insensitively, or externalId), oldest first, and how
// many there are.
func (s *Service) ListGroups(ctx context.Context, f Filter, offset, limit int) ([]Group, int64, error) {
	var p db.ListSCIMGroupsParams
	switch strings.ToLower(f.Attr) {
	case "":
	case "displayname":
		p.DisplayName = &f.Value
	case "externalid":
		p.ExternalID = &f.Value
	default:
		return nil, 0, &Error{Status: 400, SCIMType: scimInvalidFilter, Detail: "groups filter on displayName or externalId"}
	}
	q := db.New(s.pool)
	total, err := q.CountSCIMGroups(ctx, db.CountSCIMGroupsParams{DisplayName: p.DisplayName, ExternalID: p.ExternalID})
	if err != nil {
		return nil, 0, fmt.Errorf("count groups: %w", store.AdaptError(err))
	}
	p.RowOffset, p.RowLimit = int32(offset), int32(limit)
	rows, err := q.ListSCIMGroups(ctx, p)
	if err != nil {
		return nil, 0, fmt.Errorf("list groups: %w", store.AdaptError(err))
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	members, err := q.ListSCIMGroupMembers(ctx, ids)
	if err != nil {
		return nil, 0, fmt.Errorf("list group members: %w", store.AdaptError(err))
	}
	groups := make([]Group, len(rows))
	for i, r := range rows {
		groups[i].ScimGroup = r
		for _, m := range members {
			if m.GroupID == r.ID {
				groups[i].Members = append(groups[i].Members, m)
			}
		}
	}
	return groups, total, nil
}

// CreateGroup creates a group from a Group resource. A displayName in use in
// any letter case is a uniqueness conflict; a member that is no user is an
// invalid value.
func (s *Service) CreateGroup(ctx context.Context, actor Actor, resource map[string]any) (Group, error) {
	var st groupState
	if err := st.setAll(resource, true); err != nil {
		return Group{}, err
	}
	if st.displayName == "" {
		return Group{}, errInvalidValue("displayName is required")
	}
	ctx = actor.as(ctx)
	g, err := txV(ctx, s, func(q *db.Queries) (Group, error) {
		if err := lockForGroups(ctx, q, st.members); err != nil {
			return Group{}, err
		}
		row, err := q.CreateSCIMGroup(ctx, db.CreateSCIMGroupParams{DisplayName: st.displayName, ExternalID: st.externalID})
		if err != nil {
			return Group{}, groupUniqueness(err)
		}
		if err := writeMembers(ctx, q, row.ID, nil, st.members); err != nil {
			return Group{}, err
		}
		g, err := getGroup(ctx, q, row.ID)
		if err != nil {
			return Group{}, err
		}
		if err := s.recordGroup(ctx, q, "scim.created", nil, &g); err != nil {
			return Group{}, err
		}
		return g, s.applyGroups(ctx, q, st.members)
	})
	if err != nil {
		return Group{}, err
	}
	s.logChange(ctx, actor, "create", "Group", g.ID.String())
	return g, nil
}

// ReplaceGroup applies a Group resource to an existing group (PUT): its
// displayName, externalId and, when the resource has them, its members.
func (s *Service) ReplaceGroup(ctx context.Context, actor Actor, id string, resource map[string]any) (Group, error) {
	return s.modifyGroup(ctx, actor, "replace", id, func(g *groupState) error { return g.setAll(resource, true) })
}

// PatchGroup applies a PATCH's operations to a group.
func (s *Service) PatchGroup(ctx context.Context, actor Actor, id string, ops []patchOp) (Group, error) {
	return s.modifyGroup(ctx, actor, "update", id, func(g *groupState) error { return applyGroupPatch(g, ops) })
}

func (s *Service) modifyGroup(ctx context.Context, actor Actor, action, id string, change func(*groupState) error) (Group, error) {
	gid, err := uuid.Parse(id)
	if err != nil {
		return Group{}, errNotFound("group")
	}
	ctx = actor.as(ctx)
	g, err := txV(ctx, s, func(q *db.Queries) (Group, error) {
		if err := q.LockWorkspace(ctx); err != nil {
			return Group{}, fmt.Errorf("lock workspace: %w", store.AdaptError(err))
		}
		cur, err := q.LockSCIMGroup(ctx, gid)
		if errors.Is(err, pgx.ErrNoRows) {
			return Group{}, errNotFound("group")
		}
		if err != nil {
			return Group{}, fmt.Errorf("lock group: %w", store.AdaptError(err))
		}
		members, err := q.ListSCIMGroupMembers(ctx, []uuid.UUID{gid})
		if err != nil {
			return Group{}, fmt.Errorf("list group members: %w", store.AdaptError(err))
		}
		st := groupState{displayName: cur.DisplayName, externalID: cur.ExternalID}
		before := make([]int64, len(members))
		for i, m := range members {
			before[i] = m.UserID
			st.members = append(st.members, m.UserID)
		}
		if err := change(&st); err != nil {
			return Group{}, err
		}
		affected := affectedMembers(cur.DisplayName != st.displayName, before, st.members)
		if _, err := q.LockUsers(ctx, affected); err != nil {
			return Group{}, fmt.Errorf("lock members: %w", store.AdaptError(err))
		}
		if _, err := q.UpdateSCIMGroup(ctx, db.UpdateSCIMGroupParams{ID: gid, DisplayName: st.displayName, ExternalID: st.externalID}); err != nil {
			return Group{}, groupUniqueness(err)
		}
		if err := writeMembers(ctx, q, gid, before, st.members); err != nil {
			return Group{}, err
		}
		prev := Group{ScimGroup: cur, Members: members}
		g, err := getGroup(ctx, q, gid)
		if err != nil {
			return Group{}, err
		}
		if err := s.recordGroup(ctx, q, "scim.updated", &prev, &g); err != nil {
			return Group{}, err
		}
		return g, s.applyGroups(ctx, q, affected)
	})
	if err != nil {
		return Group{}, err
	}
	s.logChange(ctx, actor, action, "Group", id)
	return g, nil
}

// writeMembers turns the member list before into after; a new member must
// be a user the provider has not deleted.
func writeMembers(ctx context.Context, q *db.Queries, group uuid.UUID, before, after []int64) error {
	for _, id := range before {
		if !slices.Contains(after, id) {
			if err := q.RemoveSCIMGroupMember(ctx, db.RemoveSCIMGroupMemberParams{GroupID: group, UserID: id}); err != nil {
				return fmt.Errorf("remove group member: %w", store.AdaptError(err))
			}
		}
	}
	for _, id := range after {
		if slices.Contains(before, id) {
			continue
		}
		ok, err := q.ExistsSCIMUser(ctx, id)
		if err != nil {
			return fmt.Errorf("look up member: %w", store.AdaptError(err))
		}
		if !ok {
			return errInvalidValue("no user %d", id)
		}
		if err := q.AddSCIMGroupMember(ctx, db.AddSCIMGroupMemberParams{GroupID: group, UserID: id}); err != nil {
			return fmt.Errorf("add group member: %w", store.AdaptError(err))
		}
	}
	return nil
}

// DeleteGroup deletes a group and its memberships; its members stay, and
// lose, in the same transaction, what the group gave them.
func (s *Service) DeleteGroup(ctx context.Context, actor Actor, id string) error {
	gid, err := uuid.Parse(id)
	if err != nil {
		return errNotFound("group")
	}
	ctx = actor.as(ctx)
	_, err = txV(ctx, s, func(q *db.Queries) (struct{}, error) {
		if err := q.LockWorkspace(ctx); err != nil {
			return struct{}{}, fmt.Errorf("lock workspace: %w", store.AdaptError(err))
		}
		cur, err := q.LockSCIMGroup(ctx, gid)
		if errors.Is(err, pgx.ErrNoRows) {
			return struct{}{}, errNotFound("group")
		} else if err != nil {
			return struct{}{}, fmt.Errorf("lock group: %w", store.AdaptError(err))
		}
		members, err := q.ListSCIMGroupMembers(ctx, []uuid.UUID{gid})
		if err != nil {
			return struct{}{}, fmt.Errorf("list group members: %w", store.AdaptError(err))
		}
		ids := make([]int64, len(members))
		for i, m := range members {
			ids[i] = m.UserID
		}
		if _, err := q.LockUsers(ctx, ids); err != nil {
			return struct{}{}, fmt.Errorf("lock members: %w", store.AdaptError(err))
		}
		if _, err := q.DeleteSCIMGroup(ctx, gid); err != nil {
			return struct{}{}, fmt.Errorf("delete group: %w", store.AdaptError(err))
		}
		if err := s.recordGroup(ctx, q, "scim.deleted", &Group{ScimGroup: cur, Members: members}, nil); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, s.applyGroups(ctx, q, ids)
	})
	if err != nil {
		return err
	}
	s.logChange(ctx, actor, "delete", "Group", id)
	return nil
}

// leaveGroups removes user id from every group of theirs, recording each
// group's change (scim.updated). The caller holds the workspace lock,
// which every change of a group's members takes first.
func (s *Service) leaveGroups(ctx context.Context, q *db.Queries, id int64) error {
	gids, err := q.ListSCIMGroupIDsByMember(ctx, id)
	if err != nil {
		return fmt.Errorf("list groups of user: %w", store.AdaptError(err))
	}
	var prev []Group
	for _, gid := range gids {
		g, err := getGroup(ctx, q, gid)
		if err != nil {
			return err
		}
		prev = append(prev, g)
	}
	if err := q.DeleteSCIMGroupMembershipsByUser(ctx, id); err != nil {
		return fmt.Errorf("remove group memberships: %w", store.AdaptError(err))
	}
	for i := range prev {
		g, err := getGroup(ctx, q, prev[i].ID)
		if err != nil {
			return err
		}
		if err := s.recordGroup(ctx, q, "scim.updated", &prev[i], &g); err != nil {
			return err
		}
	}
	return nil
}

// groupJSON is a group as the SCIM API shows it, without the schemas and
// meta that change with every write: what the audit trail records before
// and after a change of a group.
type groupJSON struct {
	ID          string       `json:"id"`
	DisplayName string       `json:"displayName"`
	ExternalID  *string      `json:"externalId"`
	Members     []memberJSON `json:"members"`
}

type memberJSON struct {
	Value   string `json:"value"`
	Display string `json:"display"`
}

func groupAudit(g Group) groupJSON {
	out := groupJSON{ID: g.ID.String(), DisplayName: g.DisplayName, ExternalID: g.ExternalID, Members: []memberJSON{}}
	for _, m := range g.Members {
		out.Members = append(out.Members, memberJSON{Value: strconv.FormatInt(m.UserID, 10), Display: m.Name})
	}
	return out
}

// recordGroup records a change of a group (scim.created, scim.updated,
// scim.deleted); before or after is nil for none. An update that leaves
// the group as it was records nothing: providers resend what they sent.
func (s *Service) recordGroup(ctx context.Context, q *db.Queries, action string, before, after *Group) error {
	c := audit.Change{Action: action}
	var g *Group
	if before != nil {
		c.Before, g = groupAudit(*before), before
	}
	if after != nil {
		c.After, g = groupAudit(*after), after
	}
	if before != nil && after != nil && reflect.DeepEqual(c.Before, c.After) {
		return nil
	}
	c.Resource = audit.Resource{Type: audit.SCIM, ID: g.ID.String(), Name: audit.Str(g.DisplayName)}
	return s.trail.Record(ctx, q, c)
}

// lockForGroups takes the locks a change of group members needs before it
// writes anything: the workspace row (the change may take a workspace admin
// away), then the members' rows in id order (groupsync.Rules.Apply). Taking
// the users' rows before inserting memberships that reference them keeps
// two such changes from each waiting on the other.
func lockForGroups(ctx context.Context, q *db.Queries, users []int64) error {
	if err := q.LockWorkspace(ctx); err != nil {
		return fmt.Errorf("lock workspace: %w", store.AdaptError(err))
	}
	if _, err := q.LockUsers(ctx, users); err != nil {
		return fmt.Errorf("lock members: %w", store.AdaptError(err))
	}
	return nil
}

// affectedMembers returns the users whose groups a change of a group alters:
// everyone in it before or after when its displayName changed (mappings
// match names), else those who joined or left.
func affectedMembers(renamed bool, before, after []int64) []int64 {
	var ids []int64
	for _, id := range before {
		if renamed || !slices.Contains(after, id) {
			ids = append(ids, id)
		}
	}
	for _, id := range after {
		if (renamed || !slices.Contains(before, id)) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func groupUniqueness(err error) error {
	err = store.AdaptError(err)
	if apperr.KindOf(err) == apperr.Conflict {
		return errUniqueness("displayName is already in use")
	}
	return fmt.Errorf("write group: %w", err)
}
