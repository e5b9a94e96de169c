package httpapi

import (
	"context"
	"net/http"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
)

// ListChangeRequests lists an environment's change requests, newest first.
func (h *Handlers) ListChangeRequests(ctx context.Context, req apiserver.ListChangeRequestsRequestObject) (apiserver.ListChangeRequestsResponseObject, error) {
	var status *string
	if req.Params.Status != nil {
		s := string(*req.Params.Status)
		status = &s
	}
	rows, err := h.core.ListChangeRequests(ctx, auth.FromContext(ctx), req.EnvId, status)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListChangeRequests200JSONResponse, 0, len(rows))
	for _, r := range rows {
		cr, err := changeRequest(r)
		if err != nil {
			return nil, err
		}
		out = append(out, cr)
	}
	return out, nil
}

// ApproveChangeRequest applies a pending change request and answers the
// updated flag.
func (h *Handlers) ApproveChangeRequest(ctx context.Context, req apiserver.ApproveChangeRequestRequestObject) (apiserver.ApproveChangeRequestResponseObject, error) {
	f, err := h.core.ApproveChangeRequest(ctx, auth.FromContext(ctx), req.EnvId, req.Id)
	if err != nil {
		return nil, err
	}
	return ok(f), nil
}

// RejectChangeRequest rejects a pending change request.
func (h *Handlers) RejectChangeRequest(ctx context.Context, req apiserver.RejectChangeRequestRequestObject) (apiserver.RejectChangeRequestResponseObject, error) {
	var reason *string
	if req.Body != nil && req.Body.Reason.IsSpecified() && !req.Body.Reason.IsNull() {
		r := req.Body.Reason.MustGet()
		reason = &r
	}
	if err := h.core.RejectChangeRequest(ctx, auth.FromContext(ctx), req.EnvId, req.Id, reason); err != nil {
		return nil, err
	}
	return apiserver.RejectChangeRequest204Response{}, nil
}

// CancelChangeRequest withdraws a pending change request.
func (h *Handlers) CancelChangeRequest(ctx context.Context, req apiserver.CancelChangeRequestRequestObject) (apiserver.CancelChangeRequestResponseObject, error) {
	if err := h.core.CancelChangeRequest(ctx, auth.FromContext(ctx), req.EnvId, req.Id); err != nil {
		return nil, err
	}
	return apiserver.CancelChangeRequest204Response{}, nil
}

// VisitApproveChangeRequestResponse writes the approved flag.
func (r jsonResponse) VisitApproveChangeRequestResponse(w http.ResponseWriter) error {
	return r.visit(w)
}
