package cli

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/cli/flagfile"
	"github.com/switchyard/switchyard/cli/plan"
	"github.com/switchyard/switchyard/gen/apiclient"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

func exportCommand(g *globals) *cobra.Command {
	var project, env string
	cmd := &cobra.Command{
		Use:   "export [--project SLUG] [--env SLUG] [-o yaml|json]",
		Short: "Write the server's projects, environments, segments and flags as a flags file",
		Long: `Write a flags file (YAML unless -o json) of every project the token can see, or
of one project (--project) and one environment (--env). Every field is written,
so the file manages all of them; applying it unchanged changes nothing.`,
		Example: "  switchyard export --project checkout > flags.yaml\n  switchyard export --project checkout --env production -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			f, err := exportFile(cmd.Context(), c, project, env)
			if err != nil {
				return err
			}
			format := g.output
			if format == "table" {
				format = "yaml"
			}
			out, err := flagfile.Encode(f, format)
			if err != nil {
				return usagef("--output: %v", err)
			}
			_, err = g.out.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "only this project (its slug)")
	cmd.Flags().StringVar(&env, "env", "", "only this environment (its slug) of each project")
	return cmd
}

// exportFile reads the projects and environments chosen (all when "") into
// a file.
func exportFile(ctx context.Context, c *apiclient.ClientWithResponses, project, env string) (*flagfile.File, error) {
	r, err := c.ListProjectsWithResponse(ctx)
	if err := answer(r, err, http.StatusOK); err != nil {
		return nil, err
	}
	f := &flagfile.File{Version: 1}
	for _, p := range *r.JSON200 {
		if project != "" && p.Slug != project {
			continue
		}
		fp := flagfile.Project{Slug: p.Slug, Name: &p.Name}
		for _, e := range p.Environments {
			if env != "" && e.Slug != env {
				continue
			}
			se := &plan.Environment{ID: e.Id, Flags: map[string]eval.Flag{}, Segments: map[string]plan.Segment{}}
			if err := readEnvironment(ctx, c, se); err != nil {
				return nil, fmt.Errorf("read %s/%s: %w", p.Slug, e.Slug, err)
			}
			fe, err := exportEnvironment(e, se)
			if err != nil {
				return nil, fmt.Errorf("export %s/%s: %w", p.Slug, e.Slug, err)
			}
			fp.Environments = append(fp.Environments, fe)
		}
		if env != "" && len(fp.Environments) == 0 {
			continue
		}
		f.Projects = append(f.Projects, fp)
	}
	switch {
	case project != "" && len(f.Projects) == 0:
		return nil, fmt.Errorf("no project %q among the projects you can see (switchyard projects list)", project)
	case env != "" && len(f.Projects) == 0:
		return nil, fmt.Errorf("no environment %q in the projects you can see", env)
	}
	// Oldest first reads better, but the slug is what identifies.
	sort.SliceStable(f.Projects, func(i, j int) bool { return f.Projects[i].Slug < f.Projects[j].Slug })
	return f, nil
}

func exportEnvironment(e apiclient.EnvironmentSummary, se *plan.Environment) (flagfile.Environment, error) {
	approval := e.RequireApproval
	fe := flagfile.Environment{Slug: e.Slug, Name: &e.Name, Color: &e.Color, RequireApproval: &approval}
	for _, key := range sortedKeys(se.Segments) {
		s := se.Segments[key]
		fields, err := flagfile.SegmentFields(s.Name, s.Description, s.Rules)
		if err != nil {
			return fe, err
		}
		fe.Segments = append(fe.Segments, flagfile.Resource{Key: key, Fields: fields})
	}
	for _, key := range sortedKeys(se.Flags) {
		fields, err := flagfile.FlagFields(se.Flags[key])
		if err != nil {
			return fe, err
		}
		fe.Flags = append(fe.Flags, flagfile.Resource{Key: key, Fields: fields})
	}
	return fe, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
