package scim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

var (
	errTokenNotFound = apperr.E(apperr.NotFound, "SCIM token not found")
	errNoSCIMToken   = apperr.E(apperr.Unauthenticated, "a SCIM token is required")
)

// Token is a SCIM token as listed: never its full value.
type Token = db.ListSCIMTokensRow

// NewToken is a SCIM token just created, with its full value: the only time
// the value exists outside the caller.
type NewToken struct {
	Token Token
	Full  string
}

// Actor is the SCIM token a request came with: who made a provisioning
// change.
type Actor struct {
	TokenID int64
	Prefix  string
}

// ListTokens returns the workspace's SCIM tokens, newest first. Workspace
// admin.
func (s *Service) ListTokens(ctx context.Context, p *auth.Principal) ([]Token, error) {
	if err := access.RequireWorkspaceAdmin(p, access.AdminRead); err != nil {
		return nil, err
	}
	tokens, err := db.New(s.pool).ListSCIMTokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("list scim tokens: %w", store.AdaptError(err))
	}
	return tokens, nil
}

// CreateToken creates a SCIM token (scim_ and 64 hex digits) and records
// scim_token.created, never with its value. Workspace admin.
func (s *Service) CreateToken(ctx context.Context, p *auth.Principal, name string) (NewToken, error) {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return NewToken{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 100 {
		return NewToken{}, apperr.Field("name", "must be 1 to 100 characters")
	}
	full, prefix, hash, err := auth.NewCredential(auth.SCIMTokenKind)
	if err != nil {
		return NewToken{}, err
	}
	t, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (Token, error) {
		row, err := q.CreateSCIMToken(ctx, db.CreateSCIMTokenParams{Name: name, Hash: hash, Prefix: prefix})
		if err != nil {
			return Token{}, err
		}
		t := Token(row)
		return t, s.trail.Record(ctx, q, audit.Change{Action: "scim_token.created", Resource: tokenResource(t), After: tokenState(t)})
	})
	if err != nil {
		return NewToken{}, fmt.Errorf("create scim token: %w", store.AdaptError(err))
	}
	s.logger.InfoContext(ctx, "scim token created", "scim_token_id", t.ID, "actor_email", p.Email)
	return NewToken{Token: t, Full: full}, nil
}

// DeleteToken revokes a SCIM token: its next request answers 401. It
// records scim_token.revoked. Workspace admin.
func (s *Service) DeleteToken(ctx context.Context, p *auth.Principal, id int64) error {
	if err := access.RequireWorkspaceAdmin(p, access.Admin); err != nil {
		return err
	}
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		row, err := q.DeleteSCIMToken(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return errTokenNotFound
		}
		if err != nil {
			return err
		}
		t := Token(row)
		return s.trail.Record(ctx, q, audit.Change{Action: "scim_token.revoked", Resource: tokenResource(t), Before: tokenState(t)})
	})
	if err != nil {
		if errors.Is(err, errTokenNotFound) {
			return err
		}
		return fmt.Errorf("delete scim token: %w", store.AdaptError(err))
	}
	s.logger.InfoContext(ctx, "scim token deleted", "scim_token_id", id, "actor_email", p.Email)
	return nil
}

// tokenJSON is a SCIM token as the API lists it (GET
// /api/workspace/scim-tokens): what the audit trail records, never the
// token itself.
type tokenJSON struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

func tokenState(t Token) tokenJSON {
	out := tokenJSON{ID: t.ID, Name: t.Name, Prefix: t.Prefix, CreatedAt: t.CreatedAt.UTC()}
	if t.LastUsedAt != nil {
		at := t.LastUsedAt.UTC()
		out.LastUsedAt = &at
	}
	return out
}

func tokenResource(t Token) audit.Resource {
	return audit.Resource{Type: audit.SCIMToken, ID: strconv.FormatInt(t.ID, 10), Key: audit.Str(t.Prefix), Name: audit.Str(t.Name)}
}

// Authenticate resolves the bearer value of a /scim/v2/ request to its
// token. Only SCIM tokens are accepted there: a personal access token, an
// SDK key or a session cookie is not one (docs/scim.md, Tokens).
func (s *Service) Authenticate(ctx context.Context, bearer string) (Actor, error) {
	if !strings.HasPrefix(bearer, auth.SCIMTokenKind) {
		return Actor{}, errNoSCIMToken
	}
	q := db.New(s.pool)
	t, err := q.GetSCIMTokenByHash(ctx, auth.HashCredential(bearer))
	if errors.Is(err, pgx.ErrNoRows) {
		return Actor{}, apperr.E(apperr.Unauthenticated, "invalid credentials")
	}
	if err != nil {
		return Actor{}, fmt.Errorf("look up scim token: %w", err)
	}
	now := s.now()
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= time.Minute {
		if err := q.TouchSCIMToken(ctx, db.TouchSCIMTokenParams{ID: t.ID, Now: now, StaleBefore: now.Add(-time.Minute)}); err != nil {
			return Actor{}, fmt.Errorf("record scim token use: %w", err)
		}
	}
	return Actor{TokenID: t.ID, Prefix: t.Prefix}, nil
}
