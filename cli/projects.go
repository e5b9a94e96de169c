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
	)
}

// projects lists the projects the token can see.
func (g *globals) projects(ctx context.Context) ([]apiclient.Project, error) {
	c, err := g.client()
	if err != nil {
		return nil, err
	}
	r, err := c.ListProjectsWithResponse(ctx)
	if err != nil {
		return nil, err
	}
	if err := expect(r, r.Body, http.StatusOK); err != nil {
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
