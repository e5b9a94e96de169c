package cli

import (
	"context"
	"io"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func mcpCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the Model Context Protocol over stdio, for agents",
		Long: `Serve the Model Context Protocol (MCP) over standard input and output, so
that an agent (Claude Code, Cursor, VS Code, ...) can read and change flags
with your token. The tools go through the API's routes as the commands do:
writes in an environment that requires approval open change requests, and
the audit trail names the token. A read_only token gets the read tools only.
The connection is the usual one: --url and --token, SWITCHYARD_URL and
SWITCHYARD_TOKEN, or a profile (docs/mcp.md).`,
		Example: `  # The agent starts it; in its MCP configuration (.mcp.json, .cursor/mcp.json, ...):
  {"mcpServers": {"switchyard": {"command": "switchyard", "args": ["mcp"],
    "env": {"SWITCHYARD_URL": "https://flags.example.com", "SWITCHYARD_TOKEN": "pat_..."}}}}

  # Try it with the MCP Inspector (-e hands each variable to the server):
  npx @modelcontextprotocol/inspector --cli switchyard mcp --method tools/list \
    -e SWITCHYARD_URL=$SWITCHYARD_URL -e SWITCHYARD_TOKEN=$SWITCHYARD_TOKEN`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.mcpServer(cmd.Context())
			if err != nil {
				return err
			}
			err = s.Run(cmd.Context(), &mcp.IOTransport{Reader: io.NopCloser(g.in), Writer: mcpStdout{g.out}})
			if cmd.Context().Err() != nil {
				return nil // stopped by a signal: a normal end
			}
			return err
		},
	}
}

// mcpStdout leaves stdout open when the session ends: it is the
// process's, not the session's.
type mcpStdout struct{ io.Writer }

func (mcpStdout) Close() error { return nil }

// mcpServer is the MCP server of the caller's token: the read tools, and
// the write tools unless the token is read_only.
func (g *globals) mcpServer(ctx context.Context) (*mcp.Server, error) {
	readOnly, err := g.tokenReadOnly(ctx)
	if err != nil {
		return nil, err
	}
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "switchyard", Title: "Switchyard", Version: version},
		&mcp.ServerOptions{Instructions: mcpInstructions, Capabilities: &mcp.ServerCapabilities{}})
	g.addReadTools(s)
	if !readOnly {
		g.addWriteTools(s)
	}
	return s, nil
}

const mcpInstructions = `Switchyard serves feature flags. Projects hold environments (production,
staging, ...); each environment holds its own flags, named by key. Name a
project and an environment by slug, as list_projects shows them. Writes act
as the token's owner; in an environment that requires approval they open a
change request (its id is in the result) instead of changing the flag.`

// tokenReadOnly reports whether the caller's token is read_only. The API
// lists the caller's own tokens with their scope and display prefix, the
// first characters of the value (GET /api/tokens); the token in use is the
// one whose prefix begins it. Any doubt (a prefix shared by two tokens, or
// none found) counts as read_only: the listing is only the first line, and
// the server refuses a write of a read_only token anyway.
func (g *globals) tokenReadOnly(ctx context.Context) (bool, error) {
	_, token, err := g.connection()
	if err != nil {
		return false, err
	}
	c, err := g.client()
	if err != nil {
		return false, err
	}
	r, err := c.ListTokensWithResponse(ctx)
	if err := answer(r, err, http.StatusOK); err != nil {
		return false, err
	}
	var scopes []apiclient.TokenScope
	for _, t := range *r.JSON200 {
		if t.Prefix != "" && strings.HasPrefix(token, t.Prefix) {
			scopes = append(scopes, t.Scope)
		}
	}
	return len(scopes) != 1 || scopes[0] != apiclient.ReadWrite, nil
}

// addMCPTool adds a tool whose input is In (its schema inferred from the type,
// descriptions from the jsonschema tags) and whose result is the API's
// answer as JSON. An error, the server's refusal included, is a tool error
// the agent reads, not a protocol error.
func addMCPTool[In any](s *mcp.Server, t *mcp.Tool, h func(context.Context, In) (any, error)) {
	mcp.AddTool(s, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		out, err := h(ctx, in)
		return nil, out, err
	})
}

// The inputs name a project and an environment by slug, as the commands'
// --project and --env do.
type (
	mcpEnv struct {
		Env     string `json:"env" jsonschema:"the environment's slug, such as production (or its id)"`
		Project string `json:"project,omitempty" jsonschema:"the project's slug; needed only when several projects have an environment of that slug"`
	}
	mcpFlagKey struct {
		mcpEnv
		Key string `json:"key" jsonschema:"the flag's key"`
	}
	mcpListEnvironments struct {
		Project string `json:"project" jsonschema:"the project's slug"`
	}
	mcpListFlags struct {
		mcpEnv
		Archived *bool `json:"archived,omitempty" jsonschema:"true lists only archived flags, false only active ones; left out, both"`
	}
	mcpListChangeRequests struct {
		mcpEnv
		Status string `json:"status,omitempty" jsonschema:"only those of this status: pending, approved, rejected or cancelled"`
	}
)

func (in mcpEnv) flags() *envFlags { return &envFlags{project: in.Project, env: in.Env} }

func (g *globals) addReadTools(s *mcp.Server) {
	read := func(title string) *mcp.ToolAnnotations { return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true} }
	addMCPTool(s, &mcp.Tool{
		Name:        "list_projects",
		Description: "List the projects you can see, each with its slug and its environments (slug, name, whether changes need approval).",
		Annotations: read("List projects"),
	}, func(ctx context.Context, _ struct{}) (any, error) {
		ps, err := g.projects(ctx)
		return map[string]any{"projects": ps}, err
	})
	addMCPTool(s, &mcp.Tool{
		Name:        "list_environments",
		Description: "List a project's environments with their settings (needs project admin; list_projects names every project's environments to any member).",
		Annotations: read("List environments"),
	}, func(ctx context.Context, in mcpListEnvironments) (any, error) {
		p, err := g.project(ctx, in.Project)
		if err != nil {
			return nil, err
		}
		c, err := g.client()
		if err != nil {
			return nil, err
		}
		r, err := c.ListEnvironmentsWithResponse(ctx, p.Id)
		if err := answer(r, err, http.StatusOK); err != nil {
			return nil, err
		}
		return map[string]any{"environments": *r.JSON200}, nil
	})
	addMCPTool(s, &mcp.Tool{
		Name:        "list_flags",
		Description: "List an environment's flags with their whole configuration: type, on or off (is_enabled), rollout percentage, rules, variants, version.",
		Annotations: read("List flags"),
	}, func(ctx context.Context, in mcpListFlags) (any, error) {
		c, env, err := g.clientFor(ctx, in.flags())
		if err != nil {
			return nil, err
		}
		r, err := c.ListFlagsWithResponse(ctx, env, &apiclient.ListFlagsParams{Archived: in.Archived})
		if err := answer(r, err, http.StatusOK); err != nil {
			return nil, err
		}
		return map[string]any{"flags": *r.JSON200}, nil
	})
	addMCPTool(s, &mcp.Tool{
		Name: "get_flag",
		Description: "Read one flag and its evaluation status: new, active, inactive or launched (evaluated in the last 7 days, " +
			"always with the same value, unchanged for 7 days: a candidate for removal from code), with its evaluations of the last 7 days.",
		Annotations: read("Get a flag"),
	}, func(ctx context.Context, in mcpFlagKey) (any, error) {
		c, env, err := g.clientFor(ctx, in.flags())
		if err != nil {
			return nil, err
		}
		r, err := c.GetFlagWithResponse(ctx, env, in.Key)
		if err := answer(r, err, http.StatusOK); err != nil {
			return nil, err
		}
		st, err := c.ListFlagStatusWithResponse(ctx, env)
		if err != nil {
			return nil, err
		}
		if err := expect(st, st.Body, http.StatusOK); err != nil {
			return nil, err
		}
		var status *apiclient.FlagStatus
		for _, s := range *st.JSON200 {
			if s.FlagKey == in.Key {
				status = &s
			}
		}
		return map[string]any{"flag": *r.JSON200, "status": status}, nil
	})
	addMCPTool(s, &mcp.Tool{
		Name:        "list_change_requests",
		Description: "List an environment's change requests, newest first: changes waiting for approval (pending) and those reviewed.",
		Annotations: read("List change requests"),
	}, func(ctx context.Context, in mcpListChangeRequests) (any, error) {
		c, env, err := g.clientFor(ctx, in.flags())
		if err != nil {
			return nil, err
		}
		params := &apiclient.ListChangeRequestsParams{}
		if in.Status != "" {
			st := apiclient.ChangeRequestStatus(in.Status)
			params.Status = &st
		}
		r, err := c.ListChangeRequestsWithResponse(ctx, env, params)
		if err := answer(r, err, http.StatusOK); err != nil {
			return nil, err
		}
		return map[string]any{"change_requests": *r.JSON200}, nil
	})
}
