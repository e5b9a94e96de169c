package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// ListEnvironments answers a project's environments with their settings.
func (h *Handlers) ListEnvironments(ctx context.Context, req apiserver.ListEnvironmentsRequestObject) (apiserver.ListEnvironmentsResponseObject, error) {
	envs, err := h.identity.ListEnvironments(ctx, auth.FromContext(ctx), req.ProjectId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListEnvironments200JSONResponse, len(envs))
	for i, e := range envs {
		out[i] = environmentJSON(e)
	}
	return out, nil
}

// CreateEnvironment adds an environment to a project.
func (h *Handlers) CreateEnvironment(ctx context.Context, req apiserver.CreateEnvironmentRequestObject) (apiserver.CreateEnvironmentResponseObject, error) {
	env, err := h.identity.CreateEnvironment(ctx, auth.FromContext(ctx), req.ProjectId, identity.EnvironmentInput{
		Name: req.Body.Name, Slug: req.Body.Slug, Color: req.Body.Color,
	})
	if err != nil {
		return nil, err
	}
	return apiserver.CreateEnvironment200JSONResponse(environmentJSON(env)), nil
}

// UpdateEnvironment renames or recolors an environment.
func (h *Handlers) UpdateEnvironment(ctx context.Context, req apiserver.UpdateEnvironmentRequestObject) (apiserver.UpdateEnvironmentResponseObject, error) {
	env, err := h.identity.UpdateEnvironment(ctx, auth.FromContext(ctx), req.ProjectId, req.EnvId, identity.EnvironmentPatch{
		Name: req.Body.Name, Color: req.Body.Color,
	})
	if err != nil {
		return nil, err
	}
	return apiserver.UpdateEnvironment200JSONResponse(environmentJSON(env)), nil
}

// DeleteEnvironment deletes an environment and everything in it.
func (h *Handlers) DeleteEnvironment(ctx context.Context, req apiserver.DeleteEnvironmentRequestObject) (apiserver.DeleteEnvironmentResponseObject, error) {
	if err := h.identity.DeleteEnvironment(ctx, auth.FromContext(ctx), req.ProjectId, req.EnvId); err != nil {
		return nil, err
	}
	return apiserver.DeleteEnvironment204Response{}, nil
}

// SetDefaultEnvironment makes an environment its project's default.
func (h *Handlers) SetDefaultEnvironment(ctx context.Context, req apiserver.SetDefaultEnvironmentRequestObject) (apiserver.SetDefaultEnvironmentResponseObject, error) {
	env, err := h.identity.SetDefaultEnvironment(ctx, auth.FromContext(ctx), req.ProjectId, req.EnvId)
	if err != nil {
		return nil, err
	}
	return apiserver.SetDefaultEnvironment200JSONResponse(environmentJSON(env)), nil
}

// SetRequireApproval turns an environment's approval requirement on or off.
func (h *Handlers) SetRequireApproval(ctx context.Context, req apiserver.SetRequireApprovalRequestObject) (apiserver.SetRequireApprovalResponseObject, error) {
	env, err := h.identity.SetRequireApproval(ctx, auth.FromContext(ctx), req.ProjectId, req.EnvId, req.Body.RequireApproval)
	if err != nil {
		return nil, err
	}
	return apiserver.SetRequireApproval200JSONResponse(environmentJSON(env)), nil
}
