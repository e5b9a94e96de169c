package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
)

// IngestEvents stores a batch of goal events. Batches over 500 items were
// already refused by limitBatch before the body was decoded.
func (h *Handlers) IngestEvents(ctx context.Context, req apiserver.IngestEventsRequestObject) (apiserver.IngestEventsResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	items, err := decodeGoalEvents(*req.Body)
	if err != nil {
		return nil, err
	}
	if err := h.measure.IngestEvents(ctx, auth.FromContext(ctx), req.EnvId, items); err != nil {
		return nil, err
	}
	return apiserver.IngestEvents204Response{}, nil
}

// ListEventKeys summarises the goal event keys seen.
func (h *Handlers) ListEventKeys(ctx context.Context, req apiserver.ListEventKeysRequestObject) (apiserver.ListEventKeysResponseObject, error) {
	rows, err := h.measure.ListEventKeys(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListEventKeys200JSONResponse, len(rows))
	for i, r := range rows {
		out[i] = apiserver.EventKeySummary{EventKey: r.EventKey, Total: r.Total, UniqueUsers: r.UniqueUsers, LastSeen: r.LastSeen}
	}
	return out, nil
}
