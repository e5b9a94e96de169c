package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Token scopes (docs/reference/identity.md, Personal access tokens).
const (
	ScopeReadOnly  = "read_only"
	ScopeReadWrite = "read_write"
)

// Limits of expires_in_days: 1 to 365 (docs/reference/limits.md, Values).
const (
	minTokenDays = 1
	maxTokenDays = 365
)

var errTokenNotFound = apperr.E(apperr.NotFound, "token not found")

// NewToken is a personal access token just created, with its full value: the
// only time the value exists outside the caller (docs/reference/identity.md,
// Credentials).
type NewToken struct {
	Token db.PersonalAccessToken
	Full  string
}

// TokenInput is a new personal access token. ExpiresInDays nil means the
// token never expires.
type TokenInput struct {
	Name          string
	Scope         string
	ExpiresInDays *int
}

// ListTokens returns the caller's own personal access tokens, newest first.
// Tokens are flat: nobody, not even a workspace admin, sees another user's.
func (s *Service) ListTokens(ctx context.Context, p *auth.Principal) ([]db.PersonalAccessToken, error) {
	if err := access.RequireUser(p); err != nil {
		return nil, err
	}
	tokens, err := db.New(s.pool).ListTokensByUser(ctx, p.UserID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", store.AdaptError(err))
	}
	return tokens, nil
}

// CreateToken creates a personal access token acting as the caller. A read_only
// token cannot create a read_write token; it may create read_only ones
// (docs/reference/identity.md, Personal access tokens). The expiry counts from
// the service clock.
func (s *Service) CreateToken(ctx context.Context, p *auth.Principal, in TokenInput) (NewToken, error) {
	if err := access.RequireUser(p); err != nil {
		return NewToken{}, err
	}
	if p.ReadOnly && in.Scope != ScopeReadOnly {
		return NewToken{}, apperr.E(apperr.Forbidden, "a read_only token cannot create a read_write token")
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return NewToken{}, apperr.Field("name", "must not be empty")
	}
	if in.Scope != ScopeReadOnly && in.Scope != ScopeReadWrite {
		return NewToken{}, apperr.Field("scope", "must be read_only or read_write")
	}
	var expires *time.Time
	if d := in.ExpiresInDays; d != nil {
		if *d < minTokenDays || *d > maxTokenDays {
			return NewToken{}, apperr.Field("expires_in_days", fmt.Sprintf("must be %d to %d", minTokenDays, maxTokenDays))
		}
		at := s.now().Add(time.Duration(*d) * 24 * time.Hour)
		expires = &at
	}
	full, prefix, hash, err := auth.NewCredential(auth.TokenKind)
	if err != nil {
		return NewToken{}, err
	}
	tok, err := txV(ctx, s, func(q *db.Queries) (db.PersonalAccessToken, error) {
		tok, err := q.CreateToken(ctx, db.CreateTokenParams{
			UserID: p.UserID, Name: name, TokenHash: hash, Prefix: prefix, Scope: in.Scope, ExpiresAt: expires,
		})
		if err != nil {
			return tok, fmt.Errorf("create token: %w", store.AdaptError(err))
		}
		return tok, s.rec.recordToken(ctx, q, "token.created", nil, &tok)
	})
	if err != nil {
		return NewToken{}, err
	}
	return NewToken{Token: tok, Full: full}, nil
}

// DeleteToken revokes one of the caller's own tokens; another user's token is
// not found. Revoking is a write, so a read_only token may not.
func (s *Service) DeleteToken(ctx context.Context, p *auth.Principal, id int64) error {
	if err := access.RequireUser(p); err != nil {
		return err
	}
	if p.ReadOnly {
		return access.ErrReadOnly
	}
	return s.tx(ctx, func(q *db.Queries) error {
		tok, err := q.DeleteToken(ctx, db.DeleteTokenParams{ID: id, UserID: p.UserID})
		if errors.Is(err, pgx.ErrNoRows) {
			return errTokenNotFound
		}
		if err != nil {
			return fmt.Errorf("delete token: %w", store.AdaptError(err))
		}
		return s.rec.recordToken(ctx, q, "token.revoked", &tok, nil)
	})
}
