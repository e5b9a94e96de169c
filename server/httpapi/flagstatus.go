package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
)

// ListFlagStatus says which flags are still evaluated.
func (h *Handlers) ListFlagStatus(ctx context.Context, req apiserver.ListFlagStatusRequestObject) (apiserver.ListFlagStatusResponseObject, error) {
	st, err := h.measure.FlagStatuses(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListFlagStatus200JSONResponse, len(st))
	for i, s := range st {
		values := make([]apiserver.FlagStatusValue, len(s.Values7d))
		for j, v := range s.Values7d {
			values[j] = apiserver.FlagStatusValue{Value: v.Value, Count: v.Count}
		}
		out[i] = apiserver.FlagStatus{
			FlagKey: s.FlagKey, Status: apiserver.FlagStatusStatus(s.Status),
			LastEvaluatedAt: nullableOf(s.LastEvaluatedAt), Evaluations7d: s.Evaluations7d, Values7d: values,
		}
	}
	return out, nil
}
