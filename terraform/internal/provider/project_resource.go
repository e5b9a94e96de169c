package provider

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/switchyard/switchyard/gen/apiclient"
)

type projectResource struct{ c *client }

var (
	_ resource.ResourceWithConfigure   = (*projectResource)(nil)
	_ resource.ResourceWithImportState = (*projectResource)(nil)
)

func newProjectResource() resource.Resource { return &projectResource{} }

type projectModel struct {
	ID             types.String `tfsdk:"id"`
	Name           types.String `tfsdk:"name"`
	Slug           types.String `tfsdk:"slug"`
	EnvironmentIDs types.Map    `tfsdk:"environment_ids"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

func (r *projectResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_project"
}

func (r *projectResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A project (workspace admin). It is created with the environments Production, Staging and Development (Development the default), listed in environment_ids.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "The project's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{Required: true, Description: "The project's name; its slug is derived from it."},
			"slug": schema.StringAttribute{Computed: true, Description: "The slug derived from the name: lowercase letters and digits, other characters a hyphen. Renaming the project changes it.",
				PlanModifiers: []planmodifier.String{slugFollowsName{}}},
			"environment_ids": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				Description: "The project's environments: slug to id."},
			"created_at": schema.StringAttribute{Computed: true, Description: "When the project was created (RFC 3339).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		},
	}
}

func (r *projectResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.c = configured(req.ProviderData, &resp.Diagnostics)
}

func (r *projectResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan projectModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	a, err := r.c.api.CreateProjectWithResponse(ctx, apiclient.ProjectInput{Name: plan.Name.ValueString()})
	if err := check(a, err, http.StatusOK); err != nil {
		addError(&resp.Diagnostics, "Cannot create the project", err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, projectState(ctx, *a.JSON200, &resp.Diagnostics))...)
}

func (r *projectResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state projectModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, found, err := r.c.project(ctx, state.ID.ValueString())
	switch {
	case err != nil:
		addError(&resp.Diagnostics, "Cannot read the project", err)
	case !found:
		resp.State.RemoveResource(ctx)
	default:
		resp.Diagnostics.Append(resp.State.Set(ctx, projectState(ctx, p, &resp.Diagnostics))...)
	}
}

func (r *projectResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan projectModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, err := uuid.Parse(plan.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("id"), "Not a project id", err.Error())
		return
	}
	a, err := r.c.api.RenameProjectWithResponse(ctx, id, apiclient.ProjectInput{Name: plan.Name.ValueString()})
	if err := check(a, err, http.StatusOK); err != nil {
		addError(&resp.Diagnostics, "Cannot rename the project", err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, projectState(ctx, *a.JSON200, &resp.Diagnostics))...)
}

func (r *projectResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state projectModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, err := uuid.Parse(state.ID.ValueString())
	if err != nil {
		return // never created
	}
	a, err := r.c.api.DeleteProjectWithResponse(ctx, id)
	if err := check(a, err, http.StatusNoContent, http.StatusNotFound); err != nil {
		addError(&resp.Diagnostics, "Cannot delete the project", err)
	}
}

func (r *projectResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

// projectState is the model of an API project.
func projectState(ctx context.Context, p apiclient.Project, diags *diag.Diagnostics) projectModel {
	envs := map[string]string{}
	for _, e := range p.Environments {
		envs[e.Slug] = e.Id.String()
	}
	ids, d := types.MapValueFrom(ctx, types.StringType, envs)
	diags.Append(d...)
	return projectModel{
		ID: types.StringValue(p.Id.String()), Name: types.StringValue(p.Name), Slug: types.StringValue(p.Slug),
		EnvironmentIDs: ids, CreatedAt: types.StringValue(p.CreatedAt.UTC().Format(time.RFC3339Nano)),
	}
}

// slugFollowsName keeps the slug while the name stays, and leaves it
// unknown when the name changes (the server derives it).
type slugFollowsName struct{}

func (slugFollowsName) Description(context.Context) string {
	return "The slug stays while the name does."
}

func (m slugFollowsName) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (slugFollowsName) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() {
		return
	}
	var name, prior types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &prior)...)
	if name.Equal(prior) {
		resp.PlanValue = req.StateValue
	}
}

// project finds a project by id among those the token can see.
func (c *client) project(ctx context.Context, id string) (apiclient.Project, bool, error) {
	a, err := c.api.ListProjectsWithResponse(ctx)
	if err := check(a, err, http.StatusOK); err != nil {
		return apiclient.Project{}, false, err
	}
	for _, p := range *a.JSON200 {
		if p.Id.String() == id {
			return p, true, nil
		}
	}
	return apiclient.Project{}, false, nil
}
