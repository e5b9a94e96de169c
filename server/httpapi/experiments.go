package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// ListExperiments lists an environment's experiments, newest first.
func (h *Handlers) ListExperiments(ctx context.Context, req apiserver.ListExperimentsRequestObject) (apiserver.ListExperimentsResponseObject, error) {
	es, err := h.measure.ListExperiments(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListExperiments200JSONResponse, len(es))
	for i, e := range es {
		out[i] = experiment(e)
	}
	return out, nil
}

// GetExperiment returns one experiment.
func (h *Handlers) GetExperiment(ctx context.Context, req apiserver.GetExperimentRequestObject) (apiserver.GetExperimentResponseObject, error) {
	e, err := h.measure.GetExperiment(ctx, auth.FromContext(ctx), req.EnvId, req.Key)
	if err != nil {
		return nil, err
	}
	return apiserver.GetExperiment200JSONResponse(experiment(e)), nil
}

// CreateExperiment creates an experiment (it starts running).
func (h *Handlers) CreateExperiment(ctx context.Context, req apiserver.CreateExperimentRequestObject) (apiserver.CreateExperimentResponseObject, error) {
	b := req.Body
	e, err := h.measure.CreateExperiment(ctx, auth.FromContext(ctx), req.EnvId, measure.ExperimentInput{
		Key: b.Key, Name: b.Name, FlagKey: b.FlagKey, GoalEventKey: b.GoalEventKey,
		Description: nullableValue(b.Description), ControlVariant: nullableValue(b.ControlVariant),
	})
	if err != nil {
		return nil, err
	}
	return apiserver.CreateExperiment200JSONResponse(experiment(e)), nil
}

// PatchExperiment changes an experiment; omitted fields keep their values and
// null clears the nullable ones.
func (h *Handlers) PatchExperiment(ctx context.Context, req apiserver.PatchExperimentRequestObject) (apiserver.PatchExperimentResponseObject, error) {
	b := req.Body
	in := measure.ExperimentPatch{
		Name: b.Name, GoalEventKey: b.GoalEventKey,
		Description: nullableValue(b.Description), ControlVariant: nullableValue(b.ControlVariant),
		ClearDescription: b.Description.IsNull(), ClearControlVariant: b.ControlVariant.IsNull(),
	}
	if b.Status != nil {
		s := string(*b.Status)
		in.Status = &s
	}
	e, err := h.measure.PatchExperiment(ctx, auth.FromContext(ctx), req.EnvId, req.Key, in)
	if err != nil {
		return nil, err
	}
	return apiserver.PatchExperiment200JSONResponse(experiment(e)), nil
}

// DeleteExperiment deletes an experiment.
func (h *Handlers) DeleteExperiment(ctx context.Context, req apiserver.DeleteExperimentRequestObject) (apiserver.DeleteExperimentResponseObject, error) {
	if err := h.measure.DeleteExperiment(ctx, auth.FromContext(ctx), req.EnvId, req.Key); err != nil {
		return nil, err
	}
	return apiserver.DeleteExperiment204Response{}, nil
}

// GetExperimentResults measures an experiment.
func (h *Handlers) GetExperimentResults(ctx context.Context, req apiserver.GetExperimentResultsRequestObject) (apiserver.GetExperimentResultsResponseObject, error) {
	r, err := h.measure.ExperimentResults(ctx, auth.FromContext(ctx), req.EnvId, req.Key)
	if err != nil {
		return nil, err
	}
	out := apiserver.ExperimentResult{
		Experiment: experiment(r.Experiment), ControlVariant: nullableOf(r.ControlVariant),
		TotalExposed: r.TotalExposed, TotalConverted: r.TotalConverted,
		Variants: make([]apiserver.ExperimentVariantResult, len(r.Variants)),
	}
	source := "maintained"
	if r.Recomputed {
		source = "recomputed"
	}
	for i, v := range r.Variants {
		out.Variants[i] = apiserver.ExperimentVariantResult{
			Variant: v.Variant, Exposed: v.Exposed, Converted: v.Converted, ConversionRate: v.Rate,
			IsControl: v.IsControl, Uplift: nullableOf(v.Uplift), ZScore: nullableOf(v.Z), PValue: nullableOf(v.P),
			Significant: v.Significant, LiftCiLower: nullableOf(v.Sequential.Lower),
			LiftCiUpper: nullableOf(v.Sequential.Upper), SequentialPValue: nullableOf(v.Sequential.P),
		}
	}
	return apiserver.GetExperimentResults200JSONResponse{
		Body: out, Headers: apiserver.GetExperimentResults200ResponseHeaders{XResultsSource: source},
	}, nil
}

func experiment(e db.Experiment) apiserver.Experiment {
	return apiserver.Experiment{
		Id: e.ID, EnvironmentId: e.EnvironmentID, Key: e.Key, Name: e.Name,
		Description: nullableOf(e.Description), FlagKey: e.FlagKey, GoalEventKey: e.GoalEventKey,
		ControlVariant: nullableOf(e.ControlVariant), Status: apiserver.ExperimentStatus(e.Status), CreatedAt: e.CreatedAt,
	}
}
