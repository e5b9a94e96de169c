package httpapi

import (
	"context"
	"net/http"

	"github.com/oapi-codegen/runtime"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
)

// ListWorkspaceAudit returns a page of the workspace audit trail.
func (h *Handlers) ListWorkspaceAudit(ctx context.Context, req apiserver.ListWorkspaceAuditRequestObject) (apiserver.ListWorkspaceAuditResponseObject, error) {
	p := req.Params
	page, err := h.audit.List(ctx, auth.FromContext(ctx), trailFilter(p.ProjectId, p.EnvironmentId, p.Actor, (*string)(p.ResourceType), p.ResourceId, p.Action, p.From, p.To), p.Cursor, p.Limit)
	if err != nil {
		return nil, err
	}
	return trailPage(page), nil
}

// VerifyWorkspaceAudit recomputes the trail's hash chain.
func (h *Handlers) VerifyWorkspaceAudit(ctx context.Context, req apiserver.VerifyWorkspaceAuditRequestObject) (apiserver.VerifyWorkspaceAuditResponseObject, error) {
	v, err := h.audit.Verify(ctx, auth.FromContext(ctx), req.Params.From, req.Params.To)
	if err != nil {
		return nil, err
	}
	out := apiserver.VerifyWorkspaceAudit200JSONResponse{Ok: v.OK, Checked: v.Checked}
	if v.FirstBadID != nil {
		out.FirstBadId.Set(*v.FirstBadID)
	} else {
		out.FirstBadId.SetNull()
	}
	return out, nil
}

func trailFilter(projectID, envID *apiserver.AuditFilterProjectId, actor, resourceType, resourceID, action *string, from, to *apiserver.AuditFilterFrom) audit.Filter {
	return audit.Filter{
		ProjectID: projectID, EnvironmentID: envID, Actor: actor, ResourceType: resourceType,
		ResourceID: resourceID, Action: action, From: from, To: to,
	}
}

// trailPage writes a page of entries from their stored canonical bytes,
// without decoding them into generated types and encoding them again.
type trailPage audit.Page

func (p trailPage) VisitListWorkspaceAuditResponse(w http.ResponseWriter) error {
	n := 32
	for _, it := range p.Items {
		n += len(it) + 1
	}
	body := make([]byte, 0, n)
	body = append(body, `{"items":[`...)
	for i, it := range p.Items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it...)
	}
	body = append(body, `],"next_cursor":`...)
	if p.NextCursor == nil {
		body = append(body, "null"...)
	} else {
		body = append(body, '"')
		body = append(body, *p.NextCursor...)
		body = append(body, '"')
	}
	body = append(body, '}')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// trailExport serves GET /api/audit/export: the filters of the list, every
// entry in id order as NDJSON, through the raw exports' writer.
func (h exportHandler) trailExport(w http.ResponseWriter, r *http.Request) {
	f, err := trailQueryFilter(r)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	exp, err := h.audit.Export(r.Context(), auth.FromContext(r.Context()), f)
	if err != nil {
		h.errs.write(w, r, err)
		return
	}
	serveExport(h, w, r, exp, func(dst []byte, entry []byte) []byte { return append(dst, entry...) })
}

// trailQueryFilter reads the export's filters. The validator has checked
// them against the document already (formats, the enum, the pattern).
func trailQueryFilter(r *http.Request) (audit.Filter, error) {
	var p apiserver.ListWorkspaceAuditParams
	if err := bindTrailParams(r, &p); err != nil {
		return audit.Filter{}, err
	}
	return trailFilter(p.ProjectId, p.EnvironmentId, p.Actor, (*string)(p.ResourceType), p.ResourceId, p.Action, p.From, p.To), nil
}

// bindTrailParams binds the export's query the way the generated router
// binds the list's.
func bindTrailParams(r *http.Request, p *apiserver.ListWorkspaceAuditParams) error {
	q := r.URL.Query()
	for name, dest := range map[string]any{
		"project_id": &p.ProjectId, "environment_id": &p.EnvironmentId, "actor": &p.Actor,
		"resource_type": &p.ResourceType, "resource_id": &p.ResourceId, "action": &p.Action,
		"from": &p.From, "to": &p.To,
	} {
		if err := runtime.BindQueryParameter("form", true, false, name, q, dest); err != nil {
			return apperr.Field(name, "is not valid here")
		}
	}
	return nil
}
