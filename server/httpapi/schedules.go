package httpapi

import (
	"context"
	"encoding/json"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
)

// ListScheduledChanges lists an environment's scheduled changes by time.
func (h *Handlers) ListScheduledChanges(ctx context.Context, req apiserver.ListScheduledChangesRequestObject) (apiserver.ListScheduledChangesResponseObject, error) {
	rows, err := h.core.ListScheduledChanges(ctx, auth.FromContext(ctx), req.EnvId, nil)
	if err != nil {
		return nil, err
	}
	out, err := scheduledChanges(rows)
	return apiserver.ListScheduledChanges200JSONResponse(out), err
}

// ListFlagScheduledChanges lists one flag's scheduled changes by time.
func (h *Handlers) ListFlagScheduledChanges(ctx context.Context, req apiserver.ListFlagScheduledChangesRequestObject) (apiserver.ListFlagScheduledChangesResponseObject, error) {
	key := req.Key
	rows, err := h.core.ListScheduledChanges(ctx, auth.FromContext(ctx), req.EnvId, &key)
	if err != nil {
		return nil, err
	}
	out, err := scheduledChanges(rows)
	return apiserver.ListFlagScheduledChanges200JSONResponse(out), err
}

// CreateScheduledChange schedules a flag patch.
func (h *Handlers) CreateScheduledChange(ctx context.Context, req apiserver.CreateScheduledChangeRequestObject) (apiserver.CreateScheduledChangeResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	sc, err := h.core.CreateScheduledChange(ctx, auth.FromContext(ctx), req.EnvId, req.Key, req.Body.ScheduledAt, json.RawMessage(req.Body.Patch))
	if err != nil {
		return nil, err
	}
	out, err := scheduledChange(sc)
	return apiserver.CreateScheduledChange200JSONResponse(out), err
}

// DeleteScheduledChange removes a pending scheduled change.
func (h *Handlers) DeleteScheduledChange(ctx context.Context, req apiserver.DeleteScheduledChangeRequestObject) (apiserver.DeleteScheduledChangeResponseObject, error) {
	if err := h.core.DeleteScheduledChange(ctx, auth.FromContext(ctx), req.EnvId, req.Id); err != nil {
		return nil, err
	}
	return apiserver.DeleteScheduledChange204Response{}, nil
}

func scheduledChanges(rows []db.ScheduledChange) ([]apiserver.ScheduledChange, error) {
	out := make([]apiserver.ScheduledChange, 0, len(rows))
	for _, r := range rows {
		sc, err := scheduledChange(r)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func scheduledChange(r db.ScheduledChange) (apiserver.ScheduledChange, error) {
	var patch map[string]any
	if err := json.Unmarshal(r.Patch, &patch); err != nil {
		return apiserver.ScheduledChange{}, err
	}
	return apiserver.ScheduledChange{
		Id: r.ID, EnvironmentId: r.EnvironmentID, FlagKey: r.FlagKey, ScheduledAt: r.ScheduledAt, Patch: patch,
		ExecutedAt: nullableOf(r.ExecutedAt), Attempts: int(r.Attempts), LastError: nullableOf(r.LastError),
		CreatedAt: r.CreatedAt,
	}, nil
}
