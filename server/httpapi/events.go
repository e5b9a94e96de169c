package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/core"
)

// IngestEvents stores a batch of goal events. Batches over 500 items were
// already refused by limitBatch before the body was decoded.
func (h *Handlers) IngestEvents(ctx context.Context, req apiserver.IngestEventsRequestObject) (apiserver.IngestEventsResponseObject, error) {
	var items []core.GoalEventInput
	if req.Body != nil {
		items = make([]core.GoalEventInput, 0, len(*req.Body))
		for _, in := range *req.Body {
			if in.EventKey == nil {
				continue // skipped like an empty key (spec, Goal event)
			}
			c, err := contextJSON(in.Context)
			if err != nil {
				return nil, err
			}
			items = append(items, core.GoalEventInput{
				EventKey: *in.EventKey, UserID: nullableValue(in.UserId), Value: nullableValue(in.Value),
				Context: c, OccurredAt: in.OccurredAt,
			})
		}
	}
	if err := h.core.IngestEvents(ctx, auth.FromContext(ctx), req.EnvId, items); err != nil {
		return nil, err
	}
	return apiserver.IngestEvents204Response{}, nil
}

// ListEventKeys summarises the goal event keys seen.
func (h *Handlers) ListEventKeys(ctx context.Context, req apiserver.ListEventKeysRequestObject) (apiserver.ListEventKeysResponseObject, error) {
	rows, err := h.core.ListEventKeys(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListEventKeys200JSONResponse, len(rows))
	for i, r := range rows {
		out[i] = apiserver.EventKeySummary{EventKey: r.EventKey, Total: r.Total, UniqueUsers: r.UniqueUsers, LastSeen: r.LastSeen}
	}
	return out, nil
}
