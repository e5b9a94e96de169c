package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval/check"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Defaults of SeedConfig (docs/reference/server.md, Configuration).
const (
	defaultWorkspaceName = "Switchyard"
	defaultAdminName     = "Admin"
	minPasswordLen       = 8 // docs/reference/identity.md, Login
)

// SeedConfig is the first-boot configuration, read by server/config from
// WORKSPACE_NAME, ADMIN_EMAIL, ADMIN_PASSWORD and ADMIN_NAME. Its zero value
// seeds the workspace "Switchyard" without an admin.
type SeedConfig struct {
	WorkspaceName string // name of a newly created workspace; default "Switchyard"
	AdminEmail    string // with AdminPassword: the first workspace admin
	AdminPassword string
	AdminName     string // default "Admin"
}

// Seed performs the first boot (docs/reference/identity.md, First boot): when
// no workspace row exists it creates the workspace, the project Default (slug
// default) with its three environments and one SDK key bound to Production, and
// logs that key's full value once at INFO. Separately, when AdminEmail and
// AdminPassword are set and no user exists, it creates a workspace admin with
// those credentials.
//
// Every entity it creates is an entry of the audit trail by the system actor
// "first boot". Seed runs at every start and changes nothing once both steps
// are done. A
// transaction-scoped advisory lock serialises instances that start together,
// so exactly one of them seeds.
func (s *Service) Seed(ctx context.Context, cfg SeedConfig) error {
	ctx = audit.WithActor(ctx, firstBoot)
	if err := s.seedWorkspace(ctx, cfg.WorkspaceName); err != nil {
		return fmt.Errorf("seed workspace: %w", err)
	}
	if cfg.AdminEmail == "" || cfg.AdminPassword == "" {
		return nil
	}
	if err := s.seedAdmin(ctx, cfg); err != nil {
		return fmt.Errorf("seed workspace admin: %w", err)
	}
	return nil
}

func (s *Service) seedWorkspace(ctx context.Context, name string) error {
	if name = strings.TrimSpace(name); name == "" {
		name = defaultWorkspaceName
	}
	created, err := txV(ctx, s, func(q *db.Queries) (*newProject, error) {
		if err := q.LockWorkspaceSetup(ctx); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		if _, err := q.GetWorkspace(ctx); err == nil {
			return nil, nil // seeded before
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("get workspace: %w", err)
		}
		if _, err := q.CreateWorkspace(ctx, name); err != nil {
			return nil, fmt.Errorf("create workspace: %w", err)
		}
		if err := s.rec.recordWorkspace(ctx, q, "workspace.created", nil, &workspaceState{WorkspaceName: name}); err != nil {
			return nil, err
		}
		p, err := createProject(ctx, q, s.rec, "Default", "default")
		if err != nil {
			return nil, err
		}
		return &p, nil
	})
	if err != nil || created == nil {
		return err
	}
	// The full value of the first SDK key is written once to the log at INFO
	// level; it is stored only as a hash and cannot be shown again.
	s.logger.InfoContext(ctx, "first boot: created the Production SDK key of the Default project",
		"workspace_name", name,
		"project_id", created.Project.ID,
		"env_id", created.SDKKey.EnvironmentID,
		"sdk_key", created.FullKey)
	return nil
}

func (s *Service) seedAdmin(ctx context.Context, cfg SeedConfig) error {
	// Skip the deliberately slow password hash on every later start.
	n, err := db.New(s.pool).CountUsers(ctx)
	if err != nil {
		return fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return nil
	}
	email := strings.TrimSpace(cfg.AdminEmail)
	name := strings.TrimSpace(cfg.AdminName)
	if name == "" {
		name = defaultAdminName
	}
	if err := validatePassword(cfg.AdminPassword); err != nil {
		return err
	}
	hash, err := auth.HashPassword(cfg.AdminPassword)
	if err != nil {
		return err
	}
	created, err := txV(ctx, s, func(q *db.Queries) (bool, error) {
		if err := q.LockWorkspaceSetup(ctx); err != nil {
			return false, fmt.Errorf("lock: %w", err)
		}
		// Count again under the lock: another instance may have won the race.
		if n, err := q.CountUsers(ctx); err != nil || n > 0 {
			return false, err
		}
		u, err := q.CreateUser(ctx, db.CreateUserParams{
			Name: name, Email: email, PasswordHash: hash, Role: "admin",
		})
		if err != nil {
			return false, fmt.Errorf("create user: %w", store.AdaptError(err))
		}
		created := db.ListUsersRow(u)
		return true, s.rec.recordUser(ctx, q, "user.created", nil, &created)
	})
	if err != nil {
		return err
	}
	if created {
		s.logger.InfoContext(ctx, "first boot: created workspace admin", "email", email)
	}
	return nil
}

// validatePassword applies the password rule: at least 8 characters
// (docs/reference/identity.md, Login).
func validatePassword(pw string) error {
	if utf8.RuneCountInString(pw) < minPasswordLen {
		return apperr.Field("password", fmt.Sprintf("must be at least %d characters", minPasswordLen))
	}
	return nil
}

// newProject is what createProject made.
type newProject struct {
	Project      db.Project
	Detail       ProjectDetail    // the project as the API shows it, without its key
	Environments []db.Environment // Production, Staging, Development
	SDKKey       db.SDKKey        // bound to Production
	FullKey      string           // the key's full value, to be shown once
}

// createProject creates a project with the environments and SDK key every
// project starts with (docs/reference/identity.md, Projects and environments):
// Production (red), Staging (amber) and Development (green, the default), and
// one SDK key bound to Production. First boot and POST /api/projects both use
// it. It records project.created, environment.created for each environment
// and sdk_key.created, in that order.
func createProject(ctx context.Context, q *db.Queries, rec recorder, name, slug string) (newProject, error) {
	var out newProject
	var err error
	out.Project, err = q.CreateProject(ctx, db.CreateProjectParams{Name: name, Slug: slug})
	if err != nil {
		return out, fmt.Errorf("create project %q: %w", slug, store.AdaptError(err))
	}
	for _, seed := range check.SeededEnvironments() {
		e := db.CreateEnvironmentParams{ProjectID: out.Project.ID, Name: seed.Name, Slug: seed.Slug, Color: seed.Color, IsDefault: seed.IsDefault}
		env, err := q.CreateEnvironment(ctx, e)
		if err != nil {
			return out, fmt.Errorf("create environment %q: %w", e.Slug, store.AdaptError(err))
		}
		out.Environments = append(out.Environments, env)
	}
	full, prefix, hash, err := auth.NewCredential(auth.SDKKeyKind)
	if err != nil {
		return out, err
	}
	out.SDKKey, err = q.CreateSDKKey(ctx, db.CreateSDKKeyParams{
		ProjectID:     out.Project.ID,
		EnvironmentID: out.Environments[0].ID,
		Name:          "Production SDK key",
		Kind:          KeyKindServer,
		KeyHash:       hash,
		Prefix:        prefix,
	})
	if err != nil {
		return out, fmt.Errorf("create SDK key: %w", store.AdaptError(err))
	}
	out.FullKey = full
	if out.Detail, err = projectDetail(ctx, q, out.Project.ID); err != nil {
		return out, err
	}
	if err := rec.recordProject(ctx, q, "project.created", nil, &out.Detail); err != nil {
		return out, err
	}
	for i := range out.Environments {
		if err := rec.recordEnvironment(ctx, q, "environment.created", nil, &out.Environments[i]); err != nil {
			return out, err
		}
	}
	key := sdkKeyListing(out.SDKKey, out.Environments[0].Name)
	return out, rec.recordSDKKey(ctx, q, "sdk_key.created", out.Project.ID, nil, &key)
}
