package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

func projectsCommand(g *globals) *cobra.Command {
	return group("projects", "Projects you can see",
		&cobra.Command{
			Use:     "list",
			Short:   "List projects",
			Example: "  switchyard projects list\n  switchyard projects list -o json",
			Args:    noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				ps, err := g.projects(cmd.Context())
				if err != nil {
					return err
				}
				t := table{header: []string{"SLUG", "NAME", "ENVIRONMENTS", "MEMBERS", "ID"}}
				for _, p := range ps {
					t.rows = append(t.rows, []string{p.Slug, p.Name, strconv.Itoa(p.EnvironmentCount), strconv.Itoa(p.MemberCount), p.Id.String()})
				}
				return g.print(ps, t)
			},
		},
		projectsCreate(g), projectsRename(g), projectsDelete(g),
	)
}

// projectTable is a project as a row.
func projectTable(p apiclient.Project) table {
	return table{header: []string{"SLUG", "NAME", "ENVIRONMENTS", "ID"},
		rows: [][]string{{p.Slug, p.Name, strconv.Itoa(p.EnvironmentCount), p.Id.String()}}}
}

func projectsCreate(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "create NAME",
		Short: "Create a project (workspace admin); its slug is derived from the name",
		Long: `Create a project (workspace admin). Its slug is derived from the name; it comes
with the environments Production, Staging and Development and a server SDK key
of Production, printed once.`,
		Example: "  switchyard projects create \"Checkout\"",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			r, err := c.CreateProjectWithResponse(cmd.Context(), apiclient.ProjectInput{Name: args[0]})
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			p := *r.JSON200
			t := projectTable(p)
			if k := p.SdkKey; k != nil {
				t.header = append(t.header, "SDK KEY OF "+k.EnvironmentName+" (shown once)")
				t.rows[0] = append(t.rows[0], k.Key)
			}
			return g.print(p, t)
		},
	}
}

func projectsRename(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rename SLUG NAME",
		Short:   "Rename a project (workspace admin); its slug follows the name",
		Example: "  switchyard projects rename checkout \"Checkout and payments\"",
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.project(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			r, err := c.RenameProjectWithResponse(cmd.Context(), p.Id, apiclient.ProjectInput{Name: args[1]})
			if err := answer(r, err, http.StatusOK); err != nil {
				return err
			}
			return g.print(*r.JSON200, projectTable(*r.JSON200))
		},
	}
}

func projectsDelete(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "delete SLUG",
		Short:   "Delete a project and everything in it (workspace admin)",
		Example: "  switchyard projects delete old-shop",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.project(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			r, err := c.DeleteProjectWithResponse(cmd.Context(), p.Id)
			if err := answer(r, err, http.StatusNoContent); err != nil {
				return err
			}
			_, err = fmt.Fprintf(g.out, "deleted project %s\n", p.Slug)
			return err
		},
	}
}

// projects lists the projects the token can see.
func (g *globals) projects(ctx context.Context) ([]apiclient.Project, error) {
	c, err := g.client()
	if err != nil {
		return nil, err
	}
	r, err := c.ListProjectsWithResponse(ctx)
	if err := answer(r, err, http.StatusOK); err != nil {
		return nil, err
	}
	return *r.JSON200, nil
}

// project finds a project by slug.
func (g *globals) project(ctx context.Context, slug string) (apiclient.Project, error) {
	ps, err := g.projects(ctx)
	if err != nil {
		return apiclient.Project{}, err
	}
	for _, p := range ps {
		if p.Slug == slug {
			return p, nil
		}
	}
	return apiclient.Project{}, fmt.Errorf("no project %q among those you can see (switchyard projects list)", slug)
}
