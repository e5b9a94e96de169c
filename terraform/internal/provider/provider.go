// Package provider is the Switchyard provider for Terraform and OpenTofu,
// built on terraform-plugin-framework and the API's generated client: one
// file per resource and data source, attributes named as the API's fields,
// conversions between the API and the model in one place per resource.
package provider

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/switchyard/switchyard/gen/apiclient"
)

// Address is the provider's registry address: source = "switchyard/switchyard".
const Address = "registry.terraform.io/switchyard/switchyard"

// defaultURL is the server when neither url nor SWITCHYARD_URL says.
const defaultURL = "http://localhost:3000"

// New returns the provider's constructor for version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &switchyardProvider{version: version} }
}

type switchyardProvider struct{ version string }

var _ provider.Provider = (*switchyardProvider)(nil)

type providerModel struct {
	URL   types.String `tfsdk:"url"`
	Token types.String `tfsdk:"token"`
}

func (p *switchyardProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "switchyard"
	resp.Version = p.version
}

func (p *switchyardProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages a Switchyard server's projects, environments, flags, segments, SDK keys, members, webhooks, chat alerts and single sign-on through its API.",
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				Optional:    true,
				Description: "The server's base URL. Defaults to the SWITCHYARD_URL environment variable, else " + defaultURL + ".",
			},
			"token": schema.StringAttribute{
				Optional:    true,
				Sensitive:   true,
				Description: "A personal access token (pat_…). Defaults to the SWITCHYARD_TOKEN environment variable.",
			},
		},
	}
}

func (p *switchyardProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.URL.IsUnknown() || m.Token.IsUnknown() {
		resp.Diagnostics.AddError("Unknown provider settings", "url and token must be known when the provider is configured.")
		return
	}
	url := firstOf(m.URL.ValueString(), os.Getenv("SWITCHYARD_URL"), defaultURL)
	token := firstOf(m.Token.ValueString(), os.Getenv("SWITCHYARD_TOKEN"))
	if token == "" {
		resp.Diagnostics.AddAttributeError(path.Root("token"), "No token",
			"Give the provider a personal access token with token or the SWITCHYARD_TOKEN environment variable.")
		return
	}
	c, err := apiclient.NewClientWithResponses(url,
		apiclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}),
		apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		resp.Diagnostics.AddError("Cannot make the API client", err.Error())
		return
	}
	cl := &client{api: c, url: url}
	resp.ResourceData, resp.DataSourceData = cl, cl
}

func (p *switchyardProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newProjectResource,
	}
}

func (p *switchyardProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{}
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
