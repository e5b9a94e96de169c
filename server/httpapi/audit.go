package httpapi

import (
	"context"
	"encoding/json"

	"github.com/oapi-codegen/nullable"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/core"
)

// ListAudit returns an environment's audit log, newest first.
func (h *Handlers) ListAudit(ctx context.Context, req apiserver.ListAuditRequestObject) (apiserver.ListAuditResponseObject, error) {
	entries, err := h.core.ListAudit(ctx, auth.FromContext(ctx), req.EnvId, core.AuditQuery{
		FlagKey: req.Params.FlagKey, Limit: req.Params.Limit, Offset: req.Params.Offset,
	})
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListAudit200JSONResponse, len(entries))
	for i, e := range entries {
		if out[i], err = auditEntry(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func auditEntry(e db.AuditEntry) (apiserver.AuditEntry, error) {
	out := apiserver.AuditEntry{
		Id: e.ID, EnvironmentId: e.EnvironmentID, FlagKey: e.FlagKey, ActorEmail: e.ActorEmail,
		Action: apiserver.AuditEntryAction(e.Action), CreatedAt: e.CreatedAt,
	}
	for _, part := range []struct {
		raw json.RawMessage
		out *nullable.Nullable[map[string]any]
	}{{e.BeforeData, &out.BeforeData}, {e.AfterData, &out.AfterData}, {e.Metadata, &out.Metadata}} {
		if len(part.raw) == 0 {
			part.out.SetNull()
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(part.raw, &m); err != nil {
			return apiserver.AuditEntry{}, err
		}
		part.out.Set(m)
	}
	return out, nil
}
