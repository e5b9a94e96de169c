package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// defaultEnvironmentColor is the color of an environment created without one
// (docs/reference/identity.md, Projects and environments).
const defaultEnvironmentColor = "#6366f1"

var (
	errEnvironmentNotFound = apperr.E(apperr.NotFound, "environment not found")
	errDeleteDefaultEnv    = apperr.E(apperr.Invalid, "the default environment cannot be deleted; make another environment the default first")
	errDeleteLastEnv       = apperr.E(apperr.Invalid, "the last environment of a project cannot be deleted")
	errDeleteEnvLastKey    = apperr.E(apperr.Invalid, "deleting this environment would revoke the last SDK key of the project; create a key in another environment first")
)

// EnvironmentInput is a new environment. Color is optional.
type EnvironmentInput struct {
	Name  string
	Slug  string
	Color *string
}

// EnvironmentPatch changes an environment; nil fields keep their values.
type EnvironmentPatch struct {
	Name  *string
	Color *string
}

// ListEnvironments returns a project's environments with their settings,
// newest first. Project admin: the environments' settings routes need a
// project admin, listing included (docs/reference/identity.md, Roles).
func (s *Service) ListEnvironments(ctx context.Context, p *auth.Principal, projectID uuid.UUID) ([]db.Environment, error) {
	return txV(ctx, s, func(q *db.Queries) ([]db.Environment, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.AdminRead); err != nil {
			return nil, err
		}
		envs, err := q.ListEnvironmentsByProject(ctx, projectID)
		if err != nil {
			return nil, fmt.Errorf("list environments: %w", store.AdaptError(err))
		}
		return envs, nil
	})
}

// CreateEnvironment adds an environment to a project; it is not the default
// and requires no approval. A slug already used in the project answers
// Conflict.
func (s *Service) CreateEnvironment(ctx context.Context, p *auth.Principal, projectID uuid.UUID, in EnvironmentInput) (db.Environment, error) {
	return txV(ctx, s, func(q *db.Queries) (db.Environment, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return db.Environment{}, err
		}
		name, err := environmentName(in.Name)
		if err != nil {
			return db.Environment{}, err
		}
		color := defaultEnvironmentColor
		if in.Color != nil {
			color = *in.Color
		}
		env, err := q.CreateEnvironment(ctx, db.CreateEnvironmentParams{
			ProjectID: projectID, Name: name, Slug: in.Slug, Color: color,
		})
		if err != nil {
			return db.Environment{}, fmt.Errorf("create environment: %w", store.AdaptError(err))
		}
		return env, s.rec.recordEnvironment(ctx, q, "environment.created", nil, &env)
	})
}

// UpdateEnvironment renames or recolors an environment.
func (s *Service) UpdateEnvironment(ctx context.Context, p *auth.Principal, projectID, envID uuid.UUID, patch EnvironmentPatch) (db.Environment, error) {
	return txV(ctx, s, func(q *db.Queries) (db.Environment, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return db.Environment{}, err
		}
		if patch.Name != nil {
			name, err := environmentName(*patch.Name)
			if err != nil {
				return db.Environment{}, err
			}
			patch.Name = &name
		}
		before, err := lockEnvironment(ctx, q, projectID, envID)
		if err != nil {
			return db.Environment{}, err
		}
		env, err := q.UpdateEnvironment(ctx, db.UpdateEnvironmentParams{
			ID: envID, ProjectID: projectID, Name: patch.Name, Color: patch.Color,
		})
		if err != nil {
			return db.Environment{}, fmt.Errorf("update environment: %w", store.AdaptError(err))
		}
		return env, s.rec.recordEnvironment(ctx, q, "environment.updated", &before, &env)
	})
}

// DeleteEnvironment deletes an environment and, by cascade, its flags, SDK keys
// and everything else in it. The default environment, the last environment and
// an environment holding all of the project's server keys cannot be deleted, as
// that would leave the project without a default, an environment or a server
// key (docs/reference/identity.md, Invariants). The project row lock serialises
// this with concurrent deletions, revocations and changes of the default.
func (s *Service) DeleteEnvironment(ctx context.Context, p *auth.Principal, projectID, envID uuid.UUID) error {
	return s.tx(ctx, func(q *db.Queries) error {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return err
		}
		if err := lockProject(ctx, q, projectID); err != nil {
			return err
		}
		// Read under the lock: the default may just have moved.
		env, err := lockEnvironment(ctx, q, projectID, envID)
		if err != nil {
			return err
		}
		if env.IsDefault {
			return errDeleteDefaultEnv
		}
		n, err := q.CountEnvironmentsByProject(ctx, projectID)
		if err != nil {
			return fmt.Errorf("count environments: %w", store.AdaptError(err))
		}
		if n <= 1 {
			return errDeleteLastEnv
		}
		keys, err := q.CountServerKeysOutsideEnvironment(ctx, db.CountServerKeysOutsideEnvironmentParams{
			ProjectID: projectID, EnvironmentID: envID,
		})
		if err != nil {
			return fmt.Errorf("count SDK keys: %w", store.AdaptError(err))
		}
		if keys == 0 {
			return errDeleteEnvLastKey
		}
		if err := q.DeleteEnvironment(ctx, db.DeleteEnvironmentParams{ID: envID, ProjectID: projectID}); err != nil {
			return fmt.Errorf("delete environment: %w", store.AdaptError(err))
		}
		// Its SDK keys go with it: this entry is theirs too.
		return s.rec.recordEnvironment(ctx, q, "environment.deleted", &env, nil)
	})
}

// SetDefaultEnvironment makes an environment its project's default; the
// previous default loses it in the same transaction, so there is always
// exactly one (docs/reference/identity.md, Projects and environments).
func (s *Service) SetDefaultEnvironment(ctx context.Context, p *auth.Principal, projectID, envID uuid.UUID) (db.Environment, error) {
	return txV(ctx, s, func(q *db.Queries) (db.Environment, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return db.Environment{}, err
		}
		if err := lockProject(ctx, q, projectID); err != nil {
			return db.Environment{}, err
		}
		before, err := lockEnvironment(ctx, q, projectID, envID)
		if err != nil || before.IsDefault {
			return before, err
		}
		// Clear first: the partial unique index allows one default at a time.
		// The previous default changes too, and is an entry of its own.
		cleared, err := q.ClearDefaultEnvironment(ctx, projectID)
		if err != nil {
			return db.Environment{}, fmt.Errorf("clear default environment: %w", store.AdaptError(err))
		}
		for _, after := range cleared {
			was := after
			was.IsDefault = true
			if err := s.rec.recordEnvironment(ctx, q, "environment.updated", &was, &after); err != nil {
				return db.Environment{}, err
			}
		}
		env, err := q.SetDefaultEnvironment(ctx, db.SetDefaultEnvironmentParams{ID: envID, ProjectID: projectID})
		if err != nil {
			return db.Environment{}, fmt.Errorf("set default environment: %w", store.AdaptError(err))
		}
		return env, s.rec.recordEnvironment(ctx, q, "environment.updated", &before, &env)
	})
}

// SetRequireApproval turns an environment's approval requirement on or off
// (docs/reference/flags.md, Approval requirement).
func (s *Service) SetRequireApproval(ctx context.Context, p *auth.Principal, projectID, envID uuid.UUID, require bool) (db.Environment, error) {
	return txV(ctx, s, func(q *db.Queries) (db.Environment, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return db.Environment{}, err
		}
		before, err := lockEnvironment(ctx, q, projectID, envID)
		if err != nil {
			return db.Environment{}, err
		}
		env, err := q.SetEnvironmentRequireApproval(ctx, db.SetEnvironmentRequireApprovalParams{
			ID: envID, ProjectID: projectID, RequireApproval: require,
		})
		if err != nil {
			return db.Environment{}, fmt.Errorf("set require approval: %w", store.AdaptError(err))
		}
		return env, s.rec.recordEnvironment(ctx, q, "environment.updated", &before, &env)
	})
}

// StreamEnvironments returns the environments a stream of p carries: an
// SDK key's own; for a user (cookie or token) every environment they can
// read, or only want when given (docs/reference/stream.md, Connections).
func (s *Service) StreamEnvironments(ctx context.Context, p *auth.Principal, want *uuid.UUID) ([]uuid.UUID, error) {
	q := db.New(s.pool)
	if err := access.RequireServerKey(p); err != nil {
		return nil, err
	}
	if p.Kind == auth.KindSDKKey {
		if want != nil && *want != p.EnvironmentID {
			return nil, access.ErrEnvNotFound
		}
		return []uuid.UUID{p.EnvironmentID}, nil
	}
	if want != nil {
		if _, err := access.Env(ctx, q, p, *want, access.Read); err != nil {
			return nil, err
		}
		return []uuid.UUID{*want}, nil
	}
	ids, err := q.ListReadableEnvironmentIDs(ctx, db.ListReadableEnvironmentIDsParams{IsWorkspaceAdmin: p.WorkspaceAdmin(), UserID: p.UserID})
	if err != nil {
		return nil, fmt.Errorf("list readable environments: %w", err)
	}
	return ids, nil
}

// lockEnvironment reads an environment of a project and locks its row until
// the transaction ends, so that what a change records as before is what it
// replaced; one of another project is not found.
func lockEnvironment(ctx context.Context, q *db.Queries, projectID, envID uuid.UUID) (db.Environment, error) {
	env, err := q.LockEnvironmentInProject(ctx, db.LockEnvironmentInProjectParams{ID: envID, ProjectID: projectID})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Environment{}, errEnvironmentNotFound
	}
	if err != nil {
		return db.Environment{}, fmt.Errorf("get environment: %w", store.AdaptError(err))
	}
	return env, nil
}

// environmentName validates an environment name and returns it trimmed: at
// most 100 characters (docs/reference/limits.md, Keys and names).
func environmentName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", apperr.Field("name", "must not be empty")
	}
	return name, nil
}
