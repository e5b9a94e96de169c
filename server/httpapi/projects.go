package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// ListProjects answers the projects the caller may see, newest first.
func (h *Handlers) ListProjects(ctx context.Context, _ apiserver.ListProjectsRequestObject) (apiserver.ListProjectsResponseObject, error) {
	projects, err := h.identity.ListProjects(ctx, auth.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListProjects200JSONResponse, len(projects))
	for i, p := range projects {
		out[i] = projectJSON(p)
	}
	return out, nil
}

// CreateProject creates a project with its three environments and its
// Production SDK key, which the answer carries in full.
func (h *Handlers) CreateProject(ctx context.Context, req apiserver.CreateProjectRequestObject) (apiserver.CreateProjectResponseObject, error) {
	p, err := h.identity.CreateProject(ctx, auth.FromContext(ctx), req.Body.Name)
	if err != nil {
		return nil, err
	}
	return apiserver.CreateProject200JSONResponse(projectJSON(p)), nil
}

// RenameProject renames a project; its slug follows the new name.
func (h *Handlers) RenameProject(ctx context.Context, req apiserver.RenameProjectRequestObject) (apiserver.RenameProjectResponseObject, error) {
	p, err := h.identity.RenameProject(ctx, auth.FromContext(ctx), req.ProjectId, req.Body.Name)
	if err != nil {
		return nil, err
	}
	return apiserver.RenameProject200JSONResponse(projectJSON(p)), nil
}

// DeleteProject deletes a project and everything in it.
func (h *Handlers) DeleteProject(ctx context.Context, req apiserver.DeleteProjectRequestObject) (apiserver.DeleteProjectResponseObject, error) {
	if err := h.identity.DeleteProject(ctx, auth.FromContext(ctx), req.ProjectId); err != nil {
		return nil, err
	}
	return apiserver.DeleteProject204Response{}, nil
}

func projectJSON(p identity.ProjectDetail) apiserver.Project {
	envs := make([]apiserver.EnvironmentSummary, len(p.Environments))
	for i, e := range p.Environments {
		envs[i] = apiserver.EnvironmentSummary{
			Id: e.ID, Name: e.Name, Slug: e.Slug, Color: e.Color, IsDefault: e.IsDefault, RequireApproval: e.RequireApproval,
		}
	}
	out := apiserver.Project{
		Id:               p.ID,
		Name:             p.Name,
		Slug:             p.Slug,
		EnvironmentCount: int(p.EnvironmentCount),
		MemberCount:      int(p.MemberCount),
		CreatedAt:        p.CreatedAt,
		Environments:     envs,
	}
	if p.SDKKey != nil {
		k := newSDKKeyJSON(*p.SDKKey)
		out.SdkKey = &k
	}
	return out
}

func environmentJSON(e db.Environment) apiserver.Environment {
	return apiserver.Environment{
		Id:              e.ID,
		ProjectId:       e.ProjectID,
		Name:            e.Name,
		Slug:            e.Slug,
		Color:           e.Color,
		IsDefault:       e.IsDefault,
		RequireApproval: e.RequireApproval,
		CreatedAt:       e.CreatedAt,
	}
}
