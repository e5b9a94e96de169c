package httpapi

import (
	"context"
	"time"

	"github.com/oapi-codegen/nullable"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// ListTokens answers the caller's own tokens, by prefix only.
func (h *Handlers) ListTokens(ctx context.Context, _ apiserver.ListTokensRequestObject) (apiserver.ListTokensResponseObject, error) {
	tokens, err := h.identity.ListTokens(ctx, auth.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListTokens200JSONResponse, len(tokens))
	for i, t := range tokens {
		out[i] = apiserver.Token{
			Id:         t.ID,
			Name:       t.Name,
			Prefix:     t.Prefix,
			Scope:      apiserver.TokenScope(t.Scope),
			CreatedAt:  t.CreatedAt,
			LastUsedAt: nullableTime(t.LastUsedAt),
			ExpiresAt:  nullableTime(t.ExpiresAt),
		}
	}
	return out, nil
}

// CreateToken creates a token acting as the caller; the answer is the only
// one carrying its full value.
func (h *Handlers) CreateToken(ctx context.Context, req apiserver.CreateTokenRequestObject) (apiserver.CreateTokenResponseObject, error) {
	t, err := h.identity.CreateToken(ctx, auth.FromContext(ctx), identity.TokenInput{
		Name: req.Body.Name, Scope: string(req.Body.Scope), ExpiresInDays: req.Body.ExpiresInDays,
	})
	if err != nil {
		return nil, err
	}
	return apiserver.CreateToken200JSONResponse{
		Id:        t.Token.ID,
		Name:      t.Token.Name,
		Token:     t.Full,
		Prefix:    t.Token.Prefix,
		Scope:     apiserver.TokenScope(t.Token.Scope),
		CreatedAt: t.Token.CreatedAt,
		ExpiresAt: nullableTime(t.Token.ExpiresAt),
	}, nil
}

// DeleteToken revokes one of the caller's tokens.
func (h *Handlers) DeleteToken(ctx context.Context, req apiserver.DeleteTokenRequestObject) (apiserver.DeleteTokenResponseObject, error) {
	if err := h.identity.DeleteToken(ctx, auth.FromContext(ctx), req.Id); err != nil {
		return nil, err
	}
	return apiserver.DeleteToken204Response{}, nil
}

// nullableTime renders an optional timestamp as a required, nullable field.
func nullableTime(t *time.Time) nullable.Nullable[time.Time] {
	if t == nil {
		return nullable.NewNullNullable[time.Time]()
	}
	return nullable.NewNullableWithValue(*t)
}
