package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
)

// ListScimTokens answers the workspace's SCIM tokens, by prefix only.
func (h *Handlers) ListScimTokens(ctx context.Context, _ apiserver.ListScimTokensRequestObject) (apiserver.ListScimTokensResponseObject, error) {
	tokens, err := h.scim.ListTokens(ctx, auth.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListScimTokens200JSONResponse, len(tokens))
	for i, t := range tokens {
		out[i] = apiserver.ScimToken{
			Id:         t.ID,
			Name:       t.Name,
			Prefix:     t.Prefix,
			CreatedAt:  t.CreatedAt,
			LastUsedAt: nullableTime(t.LastUsedAt),
		}
	}
	return out, nil
}

// CreateScimToken creates a SCIM token; the answer is the only one carrying
// its full value.
func (h *Handlers) CreateScimToken(ctx context.Context, req apiserver.CreateScimTokenRequestObject) (apiserver.CreateScimTokenResponseObject, error) {
	t, err := h.scim.CreateToken(ctx, auth.FromContext(ctx), req.Body.Name)
	if err != nil {
		return nil, err
	}
	return apiserver.CreateScimToken201JSONResponse{
		Id:        t.Token.ID,
		Name:      t.Token.Name,
		Token:     t.Full,
		Prefix:    t.Token.Prefix,
		CreatedAt: t.Token.CreatedAt,
	}, nil
}

// DeleteScimToken revokes a SCIM token.
func (h *Handlers) DeleteScimToken(ctx context.Context, req apiserver.DeleteScimTokenRequestObject) (apiserver.DeleteScimTokenResponseObject, error) {
	if err := h.scim.DeleteToken(ctx, auth.FromContext(ctx), req.Id); err != nil {
		return nil, err
	}
	return apiserver.DeleteScimToken204Response{}, nil
}
