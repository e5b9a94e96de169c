package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/switchyard/switchyard/cli/flagfile"
	"github.com/switchyard/switchyard/cli/plan"
	"github.com/switchyard/switchyard/gen/apiclient"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// convert copies a generated API value into the type with the same JSON
// fields (the evaluator's model, the plan's).
func convert(from, to any) error {
	raw, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, to)
}

// readState reads what the server holds of the projects and environments
// the file names: every flag (archived too), segment and pending change
// request of each such environment.
func readState(ctx context.Context, c *apiclient.ClientWithResponses, f *flagfile.File) (plan.State, error) {
	r, err := c.ListProjectsWithResponse(ctx)
	if err := answer(r, err, http.StatusOK); err != nil {
		return plan.State{}, err
	}
	s := plan.State{Projects: map[string]*plan.Project{}}
	for _, p := range *r.JSON200 {
		sp := &plan.Project{ID: p.Id, Slug: p.Slug, Name: p.Name, Environments: map[string]*plan.Environment{}}
		for _, e := range p.Environments {
			sp.Environments[e.Slug] = &plan.Environment{ID: e.Id, Slug: e.Slug, Name: e.Name, Color: e.Color,
				RequireApproval: e.RequireApproval, Flags: map[string]eval.Flag{}, Segments: map[string]plan.Segment{}}
		}
		s.Projects[p.Slug] = sp
	}
	for _, fp := range f.Projects {
		sp := s.Projects[fp.Slug]
		if sp == nil {
			continue
		}
		for _, fe := range fp.Environments {
			if se := sp.Environments[fe.Slug]; se != nil {
				if err := readEnvironment(ctx, c, se); err != nil {
					return plan.State{}, fmt.Errorf("read %s/%s: %w", fp.Slug, fe.Slug, err)
				}
			}
		}
	}
	return s, nil
}

func readEnvironment(ctx context.Context, c *apiclient.ClientWithResponses, se *plan.Environment) error {
	flags, err := c.ListFlagsWithResponse(ctx, se.ID, &apiclient.ListFlagsParams{})
	if err != nil {
		return err
	}
	if err := expect(flags, flags.Body, http.StatusOK); err != nil {
		return err
	}
	for _, fl := range *flags.JSON200 {
		var f eval.Flag
		if err := convert(fl, &f); err != nil {
			return fmt.Errorf("flag %s: %w", fl.Key, err)
		}
		se.Flags[f.Key] = f
	}
	segs, err := c.ListSegmentsWithResponse(ctx, se.ID)
	if err != nil {
		return err
	}
	if err := expect(segs, segs.Body, http.StatusOK); err != nil {
		return err
	}
	for _, seg := range *segs.JSON200 {
		s := plan.Segment{Key: seg.Key, Name: seg.Name, Description: seg.Description}
		if err := convert(seg.Rules, &s.Rules); err != nil {
			return fmt.Errorf("segment %s: %w", seg.Key, err)
		}
		se.Segments[seg.Key] = s
	}
	pending := apiclient.Pending
	crs, err := c.ListChangeRequestsWithResponse(ctx, se.ID, &apiclient.ListChangeRequestsParams{Status: &pending})
	if err != nil {
		return err
	}
	if err := expect(crs, crs.Body, http.StatusOK); err != nil {
		return err
	}
	for _, cr := range *crs.JSON200 {
		patch, err := json.Marshal(cr.Patch)
		if err != nil {
			return err
		}
		se.Pending = append(se.Pending, plan.ChangeRequest{ID: cr.Id, FlagKey: cr.FlagKey, Patch: patch})
	}
	return nil
}

// serverState is the server's side of each environment, for the file's
// checks.
func serverState(s plan.State) flagfile.ServerState {
	return func(project, env string) flagfile.Server {
		out := flagfile.Server{Segments: map[string]bool{}, Flags: map[string]eval.Flag{}}
		if p := s.Projects[project]; p != nil {
			if e := p.Environments[env]; e != nil {
				for k := range e.Segments {
					out.Segments[k] = true
				}
				out.Flags = e.Flags
			}
		}
		return out
	}
}
