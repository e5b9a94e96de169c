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

// NewSDKKey is an SDK key just created, with its full value: the only time
// the value exists outside the caller (docs/reference/identity.md,
// Credentials).
type NewSDKKey struct {
	Key             db.SDKKey
	EnvironmentName string
	Full            string
}

var (
	errSDKKeyNotFound = apperr.E(apperr.NotFound, "SDK key not found")
	errLastSDKKey     = apperr.E(apperr.Invalid, "the last server SDK key of a project cannot be revoked")
)

// ListSDKKeys returns a project's SDK keys without their values, newest
// first. Project admin, listing included (docs/reference/identity.md, SDK
// key management).
func (s *Service) ListSDKKeys(ctx context.Context, p *auth.Principal, projectID uuid.UUID) ([]db.ListSDKKeysByProjectRow, error) {
	return txV(ctx, s, func(q *db.Queries) ([]db.ListSDKKeysByProjectRow, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.AdminRead); err != nil {
			return nil, err
		}
		keys, err := q.ListSDKKeysByProject(ctx, projectID)
		if err != nil {
			return nil, fmt.Errorf("list SDK keys: %w", store.AdaptError(err))
		}
		return keys, nil
	})
}

// The kinds of SDK key (docs/reference/identity.md, SDK key management).
const (
	KeyKindServer = "server"
	KeyKindClient = "client"
)

// keyPrefixes gives each kind of SDK key its credential prefix.
var keyPrefixes = map[string]string{KeyKindServer: auth.SDKKeyKind, KeyKindClient: auth.ClientKeyKind}

// CreateSDKKey creates an SDK key of kind (nil: server) bound to an
// environment of the project. An environment of another project, or none, is
// invalid input naming environment_id; a kind other than exactly server or
// client is invalid naming kind (docs/reference/identity.md, SDK key
// management).
func (s *Service) CreateSDKKey(ctx context.Context, p *auth.Principal, projectID uuid.UUID, name string, envID uuid.UUID, kind *string) (NewSDKKey, error) {
	return txV(ctx, s, func(q *db.Queries) (NewSDKKey, error) {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return NewSDKKey{}, err
		}
		name := strings.TrimSpace(name)
		if name == "" {
			return NewSDKKey{}, apperr.Field("name", "must not be empty")
		}
		k := KeyKindServer
		if kind != nil {
			k = *kind
		}
		credKind, ok := keyPrefixes[k]
		if !ok {
			return NewSDKKey{}, apperr.Field("kind", "must be server or client")
		}
		env, err := q.GetEnvironmentInProject(ctx, db.GetEnvironmentInProjectParams{ID: envID, ProjectID: projectID})
		if errors.Is(err, pgx.ErrNoRows) {
			return NewSDKKey{}, apperr.Field("environment_id", "must be an environment of this project")
		}
		if err != nil {
			return NewSDKKey{}, fmt.Errorf("get environment: %w", store.AdaptError(err))
		}
		full, prefix, hash, err := auth.NewCredential(credKind)
		if err != nil {
			return NewSDKKey{}, err
		}
		key, err := q.CreateSDKKey(ctx, db.CreateSDKKeyParams{
			ProjectID: projectID, EnvironmentID: env.ID, Name: name, Kind: k, KeyHash: hash, Prefix: prefix,
		})
		if err != nil {
			return NewSDKKey{}, fmt.Errorf("create SDK key: %w", store.AdaptError(err))
		}
		listed := sdkKeyListing(key, env.Name)
		if err := s.rec.recordSDKKey(ctx, q, "sdk_key.created", projectID, nil, &listed); err != nil {
			return NewSDKKey{}, err
		}
		return NewSDKKey{Key: key, EnvironmentName: env.Name, Full: full}, nil
	})
}

// RevokeSDKKey deletes an SDK key of the project. The key stops working at once
// on every instance and its streams end, through the route every ended
// credential takes (txV). A project keeps at least one server key; client keys
// can always be revoked (docs/reference/identity.md, SDK key management). The
// project row lock makes concurrent revocations (and environment deletions,
// which cascade to keys) count one after another.
func (s *Service) RevokeSDKKey(ctx context.Context, p *auth.Principal, projectID uuid.UUID, id int64) error {
	return s.tx(ctx, func(q *db.Queries) error {
		if _, err := access.Project(ctx, q, p, projectID, access.Admin); err != nil {
			return err
		}
		if err := lockProject(ctx, q, projectID); err != nil {
			return err
		}
		key, err := q.GetSDKKeyInProject(ctx, db.GetSDKKeyInProjectParams{ID: id, ProjectID: projectID})
		if errors.Is(err, pgx.ErrNoRows) {
			return errSDKKeyNotFound
		} else if err != nil {
			return fmt.Errorf("get SDK key: %w", store.AdaptError(err))
		}
		if key.Kind == KeyKindServer {
			n, err := q.CountServerKeysByProject(ctx, projectID)
			if err != nil {
				return fmt.Errorf("count SDK keys: %w", store.AdaptError(err))
			}
			if n <= 1 {
				return errLastSDKKey
			}
		}
		if err := q.DeleteSDKKey(ctx, db.DeleteSDKKeyParams{ID: id, ProjectID: projectID}); err != nil {
			return fmt.Errorf("delete SDK key: %w", store.AdaptError(err))
		}
		listed := sdkKeyState(key)
		listed.CreatedAt = listed.CreatedAt.UTC()
		return s.rec.recordSDKKey(ctx, q, "sdk_key.revoked", projectID, &listed, nil)
	})
}

// lockProject takes the project's row lock until the transaction ends. Every
// operation that could break a per-project invariant (one environment, one
// default environment, one SDK key) takes it before counting, so they run one
// after another and each counts what the previous one committed.
func lockProject(ctx context.Context, q *db.Queries, id uuid.UUID) error {
	if _, err := q.LockProject(ctx, id); errors.Is(err, pgx.ErrNoRows) {
		return errProjectNotFound // deleted since access.Project read it
	} else if err != nil {
		return fmt.Errorf("lock project: %w", store.AdaptError(err))
	}
	return nil
}
