package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/switchyard/switchyard/gen/apiclient"
)

// envFlags are the flags that name an environment: its slug (or id), and
// the project's slug when the slug alone is ambiguous.
type envFlags struct {
	project, env string
}

func (e *envFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&e.env, "env", "", "the environment's slug (or id)")
	cmd.Flags().StringVar(&e.project, "project", "", "the project's slug (needed when several projects have an environment of that slug)")
}

// resolve finds the environment's id among the projects the token can see.
func (e *envFlags) resolve(ctx context.Context, g *globals) (uuid.UUID, error) {
	if e.env == "" {
		return uuid.Nil, usagef("--env is required")
	}
	if id, err := uuid.Parse(e.env); err == nil {
		return id, nil
	}
	id, _, err := e.lookUp(ctx, g)
	return id, err
}

// lookUp finds the environment and its project among the projects the
// token can see.
func (e *envFlags) lookUp(ctx context.Context, g *globals) (uuid.UUID, apiclient.Project, error) {
	if e.env == "" {
		return uuid.Nil, apiclient.Project{}, usagef("--env is required")
	}
	ps, err := g.projects(ctx)
	if err != nil {
		return uuid.Nil, apiclient.Project{}, err
	}
	var found []apiclient.Project
	var id uuid.UUID
	for _, p := range ps {
		if e.project != "" && p.Slug != e.project {
			continue
		}
		for _, env := range p.Environments {
			if env.Slug == e.env || env.Id.String() == e.env {
				found, id = append(found, p), env.Id
			}
		}
	}
	switch len(found) {
	case 0:
		where := "any project you can see"
		if e.project != "" {
			where = "project " + e.project
		}
		return uuid.Nil, apiclient.Project{}, fmt.Errorf("no environment %q in %s (switchyard projects list)", e.env, where)
	case 1:
		return id, found[0], nil
	}
	slugs := make([]string, len(found))
	for i, p := range found {
		slugs[i] = p.Slug
	}
	return uuid.Nil, apiclient.Project{}, usagef("environment %q is in projects %s: give --project", e.env, strings.Join(slugs, ", "))
}
