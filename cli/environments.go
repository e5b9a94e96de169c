package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func environmentsCommand(g *globals) *cobra.Command {
	var project string
	list := &cobra.Command{
		Use:     "list",
		Short:   "List a project's environments (project admin)",
		Example: "  switchyard environments list --project default",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				return usagef("--project is required")
			}
			p, err := g.project(cmd.Context(), project)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			r, err := c.ListEnvironmentsWithResponse(cmd.Context(), p.Id)
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, environmentTable(*r.JSON200...))
		},
	}
	list.Flags().StringVar(&project, "project", "", "the project's slug")
	return group("environments", "A project's environments", list,
		environmentsCreate(g), environmentsUpdate(g), environmentsApproval(g), environmentsDefault(g), environmentsDelete(g))
}

func environmentTable(es ...apiclient.Environment) table {
	t := table{header: []string{"SLUG", "NAME", "COLOR", "DEFAULT", "REQUIRE APPROVAL", "ID"}}
	for _, e := range es {
		t.rows = append(t.rows, []string{e.Slug, e.Name, e.Color, strconv.FormatBool(e.IsDefault), strconv.FormatBool(e.RequireApproval), e.Id.String()})
	}
	return t
}

// environmentIn is the project and environment that --project and --env
// name, for the routes under /api/projects/{project_id}/environments.
func (g *globals) environmentIn(ctx context.Context, e *envFlags) (*apiclient.ClientWithResponses, uuid.UUID, uuid.UUID, error) {
	env, p, err := e.lookUp(ctx, g)
	if err != nil {
		return nil, uuid.Nil, uuid.Nil, err
	}
	c, err := g.client()
	return c, p.Id, env, err
}

// environmentWritten prints the environment a write answered.
func (g *globals) environmentWritten(r response, body []byte, e *apiclient.Environment) error {
	if err := expect(r, body, http.StatusOK); err != nil {
		return err
	}
	return g.print(*e, environmentTable(*e))
}

func environmentsCreate(g *globals) *cobra.Command {
	var project, name, color string
	cmd := &cobra.Command{
		Use:     "create SLUG --project SLUG [--name NAME] [--color #RRGGBB]",
		Short:   "Create an environment in a project (project admin)",
		Example: "  switchyard environments create qa --project checkout --name QA --color '#6366f1'",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if project == "" {
				return usagef("--project is required")
			}
			p, err := g.project(cmd.Context(), project)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			in := apiclient.EnvironmentInput{Slug: args[0], Name: cmpOr(name, args[0])}
			if color != "" {
				in.Color = &color
			}
			r, err := c.CreateEnvironmentWithResponse(cmd.Context(), p.Id, in)
			if err != nil {
				return err
			}
			return g.environmentWritten(r, r.Body, r.JSON200)
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "the project's slug")
	cmd.Flags().StringVar(&name, "name", "", "its name (the slug when not given)")
	cmd.Flags().StringVar(&color, "color", "", "its colour, #rgb or #rrggbb")
	return cmd
}

func environmentsUpdate(g *globals) *cobra.Command {
	var e envFlags
	var name, color string
	cmd := &cobra.Command{
		Use:     "update --env ENV [--name NAME] [--color #RRGGBB]",
		Short:   "Rename or recolour an environment (project admin)",
		Example: "  switchyard environments update --project checkout --env qa --name 'Quality assurance'",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var in apiclient.EnvironmentPatch
			if cmd.Flags().Changed("name") {
				in.Name = &name
			}
			if cmd.Flags().Changed("color") {
				in.Color = &color
			}
			if in.Name == nil && in.Color == nil {
				return usagef("give --name, --color or both")
			}
			c, project, env, err := g.environmentIn(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.UpdateEnvironmentWithResponse(cmd.Context(), project, env, in)
			if err != nil {
				return err
			}
			return g.environmentWritten(r, r.Body, r.JSON200)
		},
	}
	e.bind(cmd)
	cmd.Flags().StringVar(&name, "name", "", "the new name")
	cmd.Flags().StringVar(&color, "color", "", "the new colour, #rgb or #rrggbb")
	return cmd
}

func environmentsApproval(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use:       "require-approval on|off --env ENV",
		Short:     "Turn the approval requirement of an environment on or off (project admin)",
		Long:      "While it is on, flag changes open change requests; replacing or deleting flags, promoting into the environment and writing segments are refused.",
		Example:   "  switchyard environments require-approval on --project checkout --env production",
		Args:      exactArgs(1),
		ValidArgs: []string{"on", "off"},
		RunE: func(cmd *cobra.Command, args []string) error {
			on, ok := map[string]bool{"on": true, "off": false}[args[0]]
			if !ok {
				return usagef("require-approval: want on or off, got %q", args[0])
			}
			c, project, env, err := g.environmentIn(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.SetRequireApprovalWithResponse(cmd.Context(), project, env, apiclient.RequireApprovalInput{RequireApproval: on})
			if err != nil {
				return err
			}
			return g.environmentWritten(r, r.Body, r.JSON200)
		},
	}
	e.bind(cmd)
	return cmd
}

func environmentsDefault(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use:     "set-default --env ENV",
		Short:   "Make an environment its project's default (project admin)",
		Example: "  switchyard environments set-default --project checkout --env staging",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, project, env, err := g.environmentIn(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.SetDefaultEnvironmentWithResponse(cmd.Context(), project, env)
			if err != nil {
				return err
			}
			return g.environmentWritten(r, r.Body, r.JSON200)
		},
	}
	e.bind(cmd)
	return cmd
}

func environmentsDelete(g *globals) *cobra.Command {
	var e envFlags
	cmd := &cobra.Command{
		Use:     "delete --env ENV",
		Short:   "Delete an environment and everything in it (project admin; not the default or the last)",
		Example: "  switchyard environments delete --project checkout --env qa",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, project, env, err := g.environmentIn(cmd.Context(), &e)
			if err != nil {
				return err
			}
			r, err := c.DeleteEnvironmentWithResponse(cmd.Context(), project, env)
			if err := answer(r, err, http.StatusNoContent); err != nil {
				return err
			}
			_, err = fmt.Fprintf(g.out, "deleted environment %s\n", e.env)
			return err
		},
	}
	e.bind(cmd)
	return cmd
}
