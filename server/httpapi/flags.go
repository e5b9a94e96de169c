package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
)

// ListFlags lists an environment's flags, unexpanded.
func (h *Handlers) ListFlags(ctx context.Context, req apiserver.ListFlagsRequestObject) (apiserver.ListFlagsResponseObject, error) {
	flags, err := h.core.ListFlags(ctx, auth.FromContext(ctx), req.EnvId, req.Params.Archived)
	if err != nil {
		return nil, err
	}
	return ok(flags), nil
}

// GetFlag returns one flag.
func (h *Handlers) GetFlag(ctx context.Context, req apiserver.GetFlagRequestObject) (apiserver.GetFlagResponseObject, error) {
	f, err := h.core.GetFlag(ctx, auth.FromContext(ctx), req.EnvId, req.Key)
	if err != nil {
		return nil, err
	}
	return ok(f), nil
}

// PutFlag creates or replaces a flag.
func (h *Handlers) PutFlag(ctx context.Context, req apiserver.PutFlagRequestObject) (apiserver.PutFlagResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	f, err := h.core.PutFlag(ctx, auth.FromContext(ctx), req.EnvId, json.RawMessage(*req.Body))
	if err != nil {
		return nil, err
	}
	return ok(f), nil
}

// PatchFlag applies a merge patch, or opens a change request (202).
func (h *Handlers) PatchFlag(ctx context.Context, req apiserver.PatchFlagRequestObject) (apiserver.PatchFlagResponseObject, error) {
	var patch json.RawMessage
	switch {
	case req.JSONBody != nil:
		patch = json.RawMessage(*req.JSONBody)
	case req.ApplicationMergePatchPlusJSONBody != nil:
		patch = json.RawMessage(*req.ApplicationMergePatchPlusJSONBody)
	default:
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	res, err := h.core.PatchFlag(ctx, auth.FromContext(ctx), req.EnvId, req.Key, patch)
	if err != nil {
		return nil, err
	}
	if res.ChangeRequest != nil {
		cr, err := changeRequest(*res.ChangeRequest)
		if err != nil {
			return nil, err
		}
		return apiserver.PatchFlag202JSONResponse(cr), nil
	}
	return ok(*res.Flag), nil
}

// DeleteFlag deletes a flag.
func (h *Handlers) DeleteFlag(ctx context.Context, req apiserver.DeleteFlagRequestObject) (apiserver.DeleteFlagResponseObject, error) {
	if err := h.core.DeleteFlag(ctx, auth.FromContext(ctx), req.EnvId, req.Key); err != nil {
		return nil, err
	}
	return apiserver.DeleteFlag204Response{}, nil
}

// PromoteFlag copies a flag into another environment.
func (h *Handlers) PromoteFlag(ctx context.Context, req apiserver.PromoteFlagRequestObject) (apiserver.PromoteFlagResponseObject, error) {
	f, err := h.core.PromoteFlag(ctx, auth.FromContext(ctx), req.EnvId, req.Key, req.Body.TargetEnvId)
	if err != nil {
		return nil, err
	}
	return ok(f), nil
}

// ArchiveFlag sets archived_at.
func (h *Handlers) ArchiveFlag(ctx context.Context, req apiserver.ArchiveFlagRequestObject) (apiserver.ArchiveFlagResponseObject, error) {
	f, err := h.core.SetArchived(ctx, auth.FromContext(ctx), req.EnvId, req.Key, true)
	if err != nil {
		return nil, err
	}
	return ok(f), nil
}

// UnarchiveFlag clears archived_at.
func (h *Handlers) UnarchiveFlag(ctx context.Context, req apiserver.UnarchiveFlagRequestObject) (apiserver.UnarchiveFlagResponseObject, error) {
	f, err := h.core.SetArchived(ctx, auth.FromContext(ctx), req.EnvId, req.Key, false)
	if err != nil {
		return nil, err
	}
	return ok(f), nil
}

// diffEntry is the JSON form of core.DiffEntry (FlagDiffEntry).
type diffEntry struct {
	Key           string     `json:"key"`
	Status        string     `json:"status"`
	From          *eval.Flag `json:"from"`
	To            *eval.Flag `json:"to"`
	ChangedFields []string   `json:"changed_fields"`
}

// DiffFlags compares two environments of a project.
func (h *Handlers) DiffFlags(ctx context.Context, req apiserver.DiffFlagsRequestObject) (apiserver.DiffFlagsResponseObject, error) {
	entries, err := h.core.DiffFlags(ctx, auth.FromContext(ctx), req.ProjectId, req.Params.From, req.Params.To)
	if err != nil {
		return nil, err
	}
	out := make([]diffEntry, len(entries))
	for i, e := range entries {
		out[i] = diffEntry{Key: e.Key, Status: e.Status, From: e.From, To: e.To, ChangedFields: e.ChangedFields}
	}
	return jsonResponse{status: http.StatusOK, body: out}, nil
}

// changeRequest converts a stored change request.
func changeRequest(cr db.ChangeRequest) (apiserver.ChangeRequest, error) {
	var patch map[string]any
	if err := json.Unmarshal(cr.Patch, &patch); err != nil {
		return apiserver.ChangeRequest{}, err
	}
	out := apiserver.ChangeRequest{
		Id: cr.ID, EnvironmentId: cr.EnvironmentID, FlagKey: cr.FlagKey, Patch: patch,
		RequestedBy: cr.RequestedBy, Status: apiserver.ChangeRequestStatus(cr.Status), CreatedAt: cr.CreatedAt,
	}
	out.ReviewedBy = nullableOf(cr.ReviewedBy)
	out.Reason = nullableOf(cr.Reason)
	out.ReviewedAt = nullableOf(cr.ReviewedAt)
	return out, nil
}
