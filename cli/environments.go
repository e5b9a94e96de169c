package cli

import (
	"net/http"
	"strconv"

	"github.com/spf13/cobra"
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
			if err != nil {
				return err
			}
			if err := expect(r, r.Body, http.StatusOK); err != nil {
				return err
			}
			t := table{header: []string{"SLUG", "NAME", "DEFAULT", "REQUIRE APPROVAL", "ID"}}
			for _, e := range *r.JSON200 {
				t.rows = append(t.rows, []string{e.Slug, e.Name, strconv.FormatBool(e.IsDefault), strconv.FormatBool(e.RequireApproval), e.Id.String()})
			}
			return g.print(*r.JSON200, t)
		},
	}
	list.Flags().StringVar(&project, "project", "", "the project's slug")
	return group("environments", "A project's environments", list)
}
