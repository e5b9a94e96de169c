package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval/check"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// ProjectDetail is a project as the API shows it: its counts, its
// environments (default first, then newest first) and, only in the answer to
// its creation, the Production SDK key created with it.
type ProjectDetail struct {
	db.ListProjectsRow
	Environments []db.Environment
	SDKKey       *NewSDKKey // set only by CreateProject
}

var (
	errProjectNotFound = apperr.E(apperr.NotFound, "project not found")
	errLastProject     = apperr.E(apperr.Invalid, "the last project cannot be deleted")
)

// projectName validates a project name and returns it trimmed with its slug.
func projectName(name string) (string, string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", "", apperr.Field("name", "must not be empty")
	}
	slug := check.ProjectSlug(name)
	if slug == "" {
		return "", "", apperr.Field("name", "must contain at least one ASCII letter or digit")
	}
	return name, slug, nil
}

// ListProjects returns the projects p may see, newest first: every project
// for a workspace admin, otherwise those p is a member of
// (docs/reference/identity.md, Roles).
func (s *Service) ListProjects(ctx context.Context, p *auth.Principal) ([]ProjectDetail, error) {
	if err := access.RequireUser(p); err != nil {
		return nil, err
	}
	return txV(ctx, s, func(q *db.Queries) ([]ProjectDetail, error) {
		var rows []db.ListProjectsRow
		if p.WorkspaceAdmin() {
			var err error
			if rows, err = q.ListProjects(ctx); err != nil {
				return nil, fmt.Errorf("list projects: %w", store.AdaptError(err))
			}
		} else {
			member, err := q.ListProjectsByMember(ctx, p.UserID)
			if err != nil {
				return nil, fmt.Errorf("list projects: %w", store.AdaptError(err))
			}
			rows = make([]db.ListProjectsRow, len(member))
			for i, r := range member {
				rows[i] = db.ListProjectsRow(r)
			}
		}
		return withEnvironments(ctx, q, rows)
	})
}

// withEnvironments attaches to each project its environment summaries.
func withEnvironments(ctx context.Context, q *db.Queries, rows []db.ListProjectsRow) ([]ProjectDetail, error) {
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	envs, err := q.ListEnvironmentsByProjects(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("list environments: %w", store.AdaptError(err))
	}
	byProject := make(map[uuid.UUID][]db.Environment, len(rows))
	for _, e := range envs {
		byProject[e.ProjectID] = append(byProject[e.ProjectID], e)
	}
	out := make([]ProjectDetail, len(rows))
	for i, r := range rows {
		out[i] = ProjectDetail{ListProjectsRow: r, Environments: byProject[r.ID]}
		if out[i].Environments == nil {
			out[i].Environments = []db.Environment{}
		}
	}
	return out, nil
}

// projectDetail reads one project with its counts and environments.
func projectDetail(ctx context.Context, q *db.Queries, id uuid.UUID) (ProjectDetail, error) {
	row, err := q.GetProjectWithCounts(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return ProjectDetail{}, errProjectNotFound
	}
	if err != nil {
		return ProjectDetail{}, fmt.Errorf("get project: %w", store.AdaptError(err))
	}
	out, err := withEnvironments(ctx, q, []db.ListProjectsRow{db.ListProjectsRow(row)})
	if err != nil {
		return ProjectDetail{}, err
	}
	return out[0], nil
}

// CreateProject creates a project named name with the environments and SDK key
// every project starts with (docs/reference/identity.md, Projects and
// environments). The answer carries that key in full, the only time it is
// shown. Workspace admin only; a slug already taken answers Conflict.
func (s *Service) CreateProject(ctx context.Context, p *auth.Principal, name string) (ProjectDetail, error) {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return ProjectDetail{}, err
	}
	name, slug, err := projectName(name)
	if err != nil {
		return ProjectDetail{}, err
	}
	return txV(ctx, s, func(q *db.Queries) (ProjectDetail, error) {
		created, err := createProject(ctx, q, s.rec, name, slug)
		if err != nil {
			return ProjectDetail{}, err
		}
		out := created.Detail
		out.SDKKey = &NewSDKKey{Key: created.SDKKey, EnvironmentName: created.Environments[0].Name, Full: created.FullKey}
		return out, nil
	})
}

// RenameProject renames a project and derives its slug again; a slug taken
// by another project answers Conflict. Workspace admin only.
func (s *Service) RenameProject(ctx context.Context, p *auth.Principal, id uuid.UUID, name string) (ProjectDetail, error) {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return ProjectDetail{}, err
	}
	name, slug, err := projectName(name)
	if err != nil {
		return ProjectDetail{}, err
	}
	return txV(ctx, s, func(q *db.Queries) (ProjectDetail, error) {
		if err := lockProject(ctx, q, id); err != nil {
			return ProjectDetail{}, err
		}
		before, err := projectDetail(ctx, q, id)
		if err != nil {
			return ProjectDetail{}, err
		}
		if _, err := q.RenameProject(ctx, db.RenameProjectParams{ID: id, Name: name, Slug: slug}); err != nil {
			return ProjectDetail{}, fmt.Errorf("rename project: %w", store.AdaptError(err))
		}
		after, err := projectDetail(ctx, q, id)
		if err != nil {
			return ProjectDetail{}, err
		}
		return after, s.rec.recordProject(ctx, q, "project.updated", &before, &after)
	})
}

// DeleteProject deletes a project and, by cascade, everything in it. Workspace
// admin only. At least one project always remains (docs/reference/identity.md,
// Invariants); the workspace row lock makes concurrent deletes count one after
// another, so two deletes of the last two projects cannot both succeed.
func (s *Service) DeleteProject(ctx context.Context, p *auth.Principal, id uuid.UUID) error {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return err
	}
	return s.tx(ctx, func(q *db.Queries) error {
		if err := q.LockWorkspace(ctx); err != nil {
			return fmt.Errorf("lock workspace: %w", store.AdaptError(err))
		}
		before, err := projectDetail(ctx, q, id)
		if err != nil {
			return err
		}
		n, err := q.CountProjects(ctx)
		if err != nil {
			return fmt.Errorf("count projects: %w", store.AdaptError(err))
		}
		if n <= 1 {
			return errLastProject
		}
		if _, err := q.DeleteProject(ctx, id); err != nil {
			return fmt.Errorf("delete project: %w", store.AdaptError(err))
		}
		// Its environments and SDK keys go with it: this entry is theirs too.
		return s.rec.recordProject(ctx, q, "project.deleted", &before, nil)
	})
}
