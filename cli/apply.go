package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/cli/plan"
	"github.com/switchyard/switchyard/gen/apiclient"
)

// done is one step carried out: the change request it opened or found
// pending, if any.
type done struct {
	step          plan.Step
	changeRequest int64
}

// executor carries out a plan's steps in order through the API, knowing the
// ids of the projects and environments it has seen or made.
type executor struct {
	c        *apiclient.ClientWithResponses
	projects map[string]uuid.UUID // by slug
	envs     map[string]uuid.UUID // by project/environment slug
}

func newExecutor(c *apiclient.ClientWithResponses, s plan.State) *executor {
	x := &executor{c: c, projects: map[string]uuid.UUID{}, envs: map[string]uuid.UUID{}}
	for slug, p := range s.Projects {
		x.learn(slug, p.ID, nil)
		for es, e := range p.Environments {
			x.envs[slug+"/"+es] = e.ID
		}
	}
	return x
}

func (x *executor) learn(project string, id uuid.UUID, envs []apiclient.EnvironmentSummary) {
	x.projects[project] = id
	for _, e := range envs {
		x.envs[project+"/"+e.Slug] = e.Id
	}
}

// run carries out the steps until the first refusal, and returns what was
// done.
func (x *executor) run(ctx context.Context, p plan.Plan) ([]done, error) {
	var out []done
	for _, s := range p.Steps {
		if s.Pending != 0 {
			out = append(out, done{step: s, changeRequest: s.Pending})
			continue
		}
		cr, err := x.step(ctx, s)
		if err != nil {
			return out, fmt.Errorf("%s: %w", s.Resource(), err)
		}
		out = append(out, done{step: s, changeRequest: cr})
	}
	return out, nil
}

const jsonType = "application/json"

// step sends one step's request. A resource that a concurrent apply made
// or deleted first is taken as it is: a create that finds it made sets it
// as the file says, a delete that finds it gone is done.
func (x *executor) step(ctx context.Context, s plan.Step) (int64, error) {
	body := bytes.NewReader(s.Body)
	project, env := x.projects[s.Project], x.envs[s.Project+"/"+s.Environment]
	switch s.Op {
	case plan.CreateProject:
		r, err := x.c.CreateProjectWithBodyWithResponse(ctx, jsonType, body)
		switch {
		case err != nil:
			return 0, err
		case r.StatusCode() == http.StatusConflict:
			return 0, x.relearn(ctx)
		}
		if err := expect(r, r.Body, http.StatusOK); err != nil {
			return 0, err
		}
		x.learn(s.Project, r.JSON200.Id, r.JSON200.Environments)
		return 0, nil
	case plan.RenameProject:
		r, err := x.c.RenameProjectWithBodyWithResponse(ctx, project, jsonType, body)
		return 0, answer(r, err, http.StatusOK)
	case plan.CreateEnvironment:
		r, err := x.c.CreateEnvironmentWithBodyWithResponse(ctx, project, jsonType, body)
		switch {
		case err != nil:
			return 0, err
		case r.StatusCode() == http.StatusConflict:
			return 0, x.relearn(ctx)
		}
		if err := expect(r, r.Body, http.StatusOK); err != nil {
			return 0, err
		}
		x.envs[s.Project+"/"+s.Environment] = r.JSON200.Id
		return 0, nil
	case plan.UpdateEnvironment:
		r, err := x.c.UpdateEnvironmentWithBodyWithResponse(ctx, project, env, jsonType, body)
		return 0, answer(r, err, http.StatusOK)
	case plan.SetApproval:
		r, err := x.c.SetRequireApprovalWithBodyWithResponse(ctx, project, env, jsonType, body)
		return 0, answer(r, err, http.StatusOK)
	case plan.CreateSegment:
		r, err := x.c.CreateSegmentWithBodyWithResponse(ctx, env, jsonType, body)
		if err != nil {
			return 0, err
		}
		if r.StatusCode() != http.StatusConflict || !x.segmentExists(ctx, env, s.Key) {
			return 0, expect(r, r.Body, http.StatusOK)
		}
		fallthrough
	case plan.UpdateSegment:
		r, err := x.c.PatchSegmentWithBodyWithResponse(ctx, env, s.Key, jsonType, bytes.NewReader(s.Body))
		return 0, answer(r, err, http.StatusOK)
	case plan.DeleteSegment:
		r, err := x.c.DeleteSegmentWithResponse(ctx, env, s.Key)
		if err != nil || r.StatusCode() == http.StatusNotFound {
			return 0, err
		}
		return 0, expect(r, r.Body, http.StatusNoContent)
	case plan.CreateFlag:
		r, err := x.c.PutFlagWithBodyWithResponse(ctx, env, jsonType, body)
		return 0, answer(r, err, http.StatusOK)
	case plan.UpdateFlag:
		r, err := x.c.PatchFlagWithBodyWithResponse(ctx, env, s.Key, "application/merge-patch+json", body)
		if err != nil {
			return 0, err
		}
		if r.StatusCode() == http.StatusAccepted && r.JSON202 != nil {
			return r.JSON202.Id, nil
		}
		return 0, expect(r, r.Body, http.StatusOK)
	case plan.ArchiveFlag:
		r, err := x.c.ArchiveFlagWithResponse(ctx, env, s.Key)
		return 0, answer(r, err, http.StatusOK)
	case plan.UnarchiveFlag:
		r, err := x.c.UnarchiveFlagWithResponse(ctx, env, s.Key)
		return 0, answer(r, err, http.StatusOK)
	case plan.DeleteFlag:
		r, err := x.c.DeleteFlagWithResponse(ctx, env, s.Key)
		if err != nil || r.StatusCode() == http.StatusNotFound {
			return 0, err
		}
		return 0, expect(r, r.Body, http.StatusNoContent)
	}
	return 0, fmt.Errorf("unknown step %q", s.Op)
}

// segmentExists tells a create refused because the key is taken (by a
// concurrent apply) from one refused for another reason.
func (x *executor) segmentExists(ctx context.Context, env uuid.UUID, key string) bool {
	r, err := x.c.GetSegmentWithResponse(ctx, env, key)
	return err == nil && r.StatusCode() == http.StatusOK
}

// relearn reads the projects again after a create found its slug taken by
// a concurrent apply, so that the steps after it find the ids.
func (x *executor) relearn(ctx context.Context) error {
	r, err := x.c.ListProjectsWithResponse(ctx)
	if err := answer(r, err, http.StatusOK); err != nil {
		return err
	}
	for _, p := range *r.JSON200 {
		x.learn(p.Slug, p.Id, p.Environments)
	}
	return nil
}
