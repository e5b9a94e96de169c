package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// ListSdkKeys answers a project's SDK keys, by prefix only.
func (h *Handlers) ListSdkKeys(ctx context.Context, req apiserver.ListSdkKeysRequestObject) (apiserver.ListSdkKeysResponseObject, error) {
	keys, err := h.identity.ListSDKKeys(ctx, auth.FromContext(ctx), req.ProjectId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListSdkKeys200JSONResponse, len(keys))
	for i, k := range keys {
		out[i] = apiserver.SdkKey{
			Id:              k.ID,
			Name:            k.Name,
			Kind:            apiserver.SdkKeyKind(k.Kind),
			Prefix:          k.Prefix,
			EnvironmentId:   k.EnvironmentID,
			EnvironmentName: k.EnvironmentName,
			CreatedAt:       k.CreatedAt,
		}
	}
	return out, nil
}

// CreateSdkKey creates an SDK key; the answer is the only one carrying its
// full value.
func (h *Handlers) CreateSdkKey(ctx context.Context, req apiserver.CreateSdkKeyRequestObject) (apiserver.CreateSdkKeyResponseObject, error) {
	k, err := h.identity.CreateSDKKey(ctx, auth.FromContext(ctx), req.ProjectId, req.Body.Name, req.Body.EnvironmentId, nullableValue(req.Body.Kind))
	if err != nil {
		return nil, err
	}
	return apiserver.CreateSdkKey200JSONResponse(newSDKKeyJSON(k)), nil
}

// RevokeSdkKey revokes an SDK key at once.
func (h *Handlers) RevokeSdkKey(ctx context.Context, req apiserver.RevokeSdkKeyRequestObject) (apiserver.RevokeSdkKeyResponseObject, error) {
	if err := h.identity.RevokeSDKKey(ctx, auth.FromContext(ctx), req.ProjectId, req.Id); err != nil {
		return nil, err
	}
	return apiserver.RevokeSdkKey204Response{}, nil
}

func newSDKKeyJSON(k identity.NewSDKKey) apiserver.SdkKeyCreated {
	return apiserver.SdkKeyCreated{
		Id:              k.Key.ID,
		Name:            k.Key.Name,
		Kind:            apiserver.SdkKeyKind(k.Key.Kind),
		Key:             k.Full,
		Prefix:          k.Key.Prefix,
		EnvironmentId:   k.Key.EnvironmentID,
		EnvironmentName: k.EnvironmentName,
		CreatedAt:       k.Key.CreatedAt,
	}
}
