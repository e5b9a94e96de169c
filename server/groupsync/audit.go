package groupsync

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/store"
)

// User is a user as the API shows them (GET /api/users): what the audit
// trail records before and after a change of a user that single sign-on,
// SCIM or the group rules make.
type User struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	Active    bool      `json:"active"`
	SSOLinked bool      `json:"sso_linked"`
	CreatedAt time.Time `json:"created_at"`
}

// Member is a project membership as the API shows it (GET
// /api/projects/{id}/members).
type Member struct {
	UserID int64  `json:"user_id"`
	Name   string `json:"name"`
	Email  string `json:"email"`
	Role   string `json:"role"`
}

// LockUser locks user id's row and returns them as the API shows them.
func LockUser(ctx context.Context, q *db.Queries, id int64) (User, error) {
	u, err := q.LockUser(ctx, id)
	if err != nil {
		return User{}, fmt.Errorf("lock user %d: %w", id, store.AdaptError(err))
	}
	return User{ID: u.ID, Name: u.Name, Email: u.Email, Role: u.Role, Active: u.Active, SSOLinked: u.SsoLinked, CreatedAt: u.CreatedAt.UTC()}, nil
}

// RecordUser records a change of a user (user.created, user.updated, ...)
// in q's transaction; before or after is nil for none. The actor is the
// context's (audit.WithActor).
func RecordUser(ctx context.Context, q *db.Queries, trail *audit.Trail, action string, before, after *User) error {
	c := audit.Change{Action: action}
	var u *User
	if before != nil {
		c.Before, u = *before, before
	}
	if after != nil {
		c.After, u = *after, after
	}
	c.Resource = audit.Resource{Type: audit.User, ID: strconv.FormatInt(u.ID, 10), Name: audit.Str(u.Name)}
	return trail.Record(ctx, q, c)
}

// recordMember records a change of user u's membership of project: before
// or after is the role, "" for none.
func recordMember(ctx context.Context, q *db.Queries, trail *audit.Trail, action string, project uuid.UUID, u User, before, after string) error {
	c := audit.Change{
		Action:    action,
		Resource:  audit.Resource{Type: audit.Member, ID: strconv.FormatInt(u.ID, 10), Name: audit.Str(u.Name)},
		ProjectID: audit.ID(project),
	}
	if before != "" {
		c.Before = Member{UserID: u.ID, Name: u.Name, Email: u.Email, Role: before}
	}
	if after != "" {
		c.After = Member{UserID: u.ID, Name: u.Name, Email: u.Email, Role: after}
	}
	return trail.Record(ctx, q, c)
}

// RemoveMemberships removes every project membership of user u, those made
// by hand too, recording a member.deleted for each in q's transaction. The
// caller holds u's row lock.
func RemoveMemberships(ctx context.Context, q *db.Queries, trail *audit.Trail, u User) error {
	have, err := q.ListSSOMemberships(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("list memberships: %w", store.AdaptError(err))
	}
	if err := q.DeleteMembershipsByUser(ctx, u.ID); err != nil {
		return fmt.Errorf("remove memberships: %w", store.AdaptError(err))
	}
	for _, m := range have {
		if err := recordMember(ctx, q, trail, "member.deleted", m.ProjectID, u, m.Role, ""); err != nil {
			return err
		}
	}
	return nil
}
