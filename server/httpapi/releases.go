package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/release"
)

// CreateRelease starts a guarded release of a flag.
func (h *Handlers) CreateRelease(ctx context.Context, req apiserver.CreateReleaseRequestObject) (apiserver.CreateReleaseResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	b := req.Body
	in := release.Input{
		Stages:  make([]release.Stage, len(b.Stages)),
		Metrics: make([]release.Metric, len(b.Metrics)),
		Alpha:   b.Alpha, MinUsers: b.MinUsers, CheckIntervalSeconds: b.CheckIntervalSeconds,
	}
	for i, s := range b.Stages {
		in.Stages[i] = release.Stage{Percentage: s.Percentage, DurationSeconds: s.DurationSeconds}
	}
	for i, m := range b.Metrics {
		in.Metrics[i] = release.Metric{
			EventKey: m.EventKey, Kind: string(m.Kind), BadDirection: string(m.BadDirection), Tolerance: m.Tolerance,
		}
	}
	r, err := h.releases.Create(ctx, auth.FromContext(ctx), req.EnvId, req.Key, in)
	if err != nil {
		return nil, err
	}
	return apiserver.CreateRelease201JSONResponse(releaseOut(r)), nil
}

// ListReleases lists an environment's releases, newest first.
func (h *Handlers) ListReleases(ctx context.Context, req apiserver.ListReleasesRequestObject) (apiserver.ListReleasesResponseObject, error) {
	var status *string
	if req.Params.Status != nil {
		s := string(*req.Params.Status)
		status = &s
	}
	rs, err := h.releases.List(ctx, auth.FromContext(ctx), req.EnvId, status, req.Params.FlagKey)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListReleases200JSONResponse, len(rs))
	for i, r := range rs {
		out[i] = releaseOut(r)
	}
	return out, nil
}

// GetRelease returns one release with its latest check.
func (h *Handlers) GetRelease(ctx context.Context, req apiserver.GetReleaseRequestObject) (apiserver.GetReleaseResponseObject, error) {
	r, err := h.releases.Get(ctx, auth.FromContext(ctx), req.EnvId, req.Id)
	if err != nil {
		return nil, err
	}
	return apiserver.GetRelease200JSONResponse(releaseOut(r)), nil
}

// ListReleaseChecks returns every check of a release, oldest first.
func (h *Handlers) ListReleaseChecks(ctx context.Context, req apiserver.ListReleaseChecksRequestObject) (apiserver.ListReleaseChecksResponseObject, error) {
	as, err := h.releases.Checks(ctx, auth.FromContext(ctx), req.EnvId, req.Id)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListReleaseChecks200JSONResponse, len(as))
	for i, a := range as {
		out[i] = analysisOut(a)
	}
	return out, nil
}

// PauseRelease pauses a running release.
func (h *Handlers) PauseRelease(ctx context.Context, req apiserver.PauseReleaseRequestObject) (apiserver.PauseReleaseResponseObject, error) {
	r, err := h.releases.Act(ctx, auth.FromContext(ctx), req.EnvId, req.Id, release.ActionPause)
	if err != nil {
		return nil, err
	}
	return apiserver.PauseRelease200JSONResponse(releaseOut(r)), nil
}

// ResumeRelease resumes a paused release.
func (h *Handlers) ResumeRelease(ctx context.Context, req apiserver.ResumeReleaseRequestObject) (apiserver.ResumeReleaseResponseObject, error) {
	r, err := h.releases.Act(ctx, auth.FromContext(ctx), req.EnvId, req.Id, release.ActionResume)
	if err != nil {
		return nil, err
	}
	return apiserver.ResumeRelease200JSONResponse(releaseOut(r)), nil
}

// RollbackRelease rolls a running or paused release back.
func (h *Handlers) RollbackRelease(ctx context.Context, req apiserver.RollbackReleaseRequestObject) (apiserver.RollbackReleaseResponseObject, error) {
	r, err := h.releases.Act(ctx, auth.FromContext(ctx), req.EnvId, req.Id, release.ActionRollback)
	if err != nil {
		return nil, err
	}
	return apiserver.RollbackRelease200JSONResponse(releaseOut(r)), nil
}

// CancelRelease cancels a running or paused release, leaving its flag as it
// is.
func (h *Handlers) CancelRelease(ctx context.Context, req apiserver.CancelReleaseRequestObject) (apiserver.CancelReleaseResponseObject, error) {
	r, err := h.releases.Act(ctx, auth.FromContext(ctx), req.EnvId, req.Id, release.ActionCancel)
	if err != nil {
		return nil, err
	}
	return apiserver.CancelRelease200JSONResponse(releaseOut(r)), nil
}

func releaseOut(r release.Release) apiserver.Release {
	out := apiserver.Release{
		Id: r.ID, EnvironmentId: r.EnvironmentID, FlagKey: r.FlagKey, Status: apiserver.ReleaseStatus(r.Status),
		Stages: make([]apiserver.ReleaseStage, len(r.Stages)), StageIndex: r.StageIndex, StageStartedAt: r.StageStartedAt,
		Metrics: make([]apiserver.ReleaseMetric, len(r.Metrics)), Alpha: r.Alpha, MinUsers: r.MinUsers,
		CheckIntervalSeconds: r.CheckIntervalSeconds, PreviousRolloutPercentage: nullableOf(r.PreviousRolloutPercentage),
		Reason: nullableOf(r.Reason), CreatedBy: nullableOf(r.CreatedBy), StartedAt: r.StartedAt,
		EndedAt: nullableOf(r.EndedAt), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	for i, s := range r.Stages {
		out.Stages[i] = apiserver.ReleaseStage{Percentage: s.Percentage, DurationSeconds: s.DurationSeconds}
	}
	for i, m := range r.Metrics {
		out.Metrics[i] = apiserver.ReleaseMetric{
			EventKey: m.EventKey, Kind: apiserver.ReleaseMetricKind(m.Kind),
			BadDirection: apiserver.ReleaseBadDirection(m.BadDirection), Tolerance: m.Tolerance,
		}
	}
	var a *apiserver.ReleaseAnalysis
	if r.Analysis != nil {
		v := analysisOut(*r.Analysis)
		a = &v
	}
	out.Analysis = nullableOf(a)
	return out
}

func analysisOut(a release.Analysis) apiserver.ReleaseAnalysis {
	out := apiserver.ReleaseAnalysis{
		CheckedAt: a.CheckedAt, StageIndex: a.StageIndex, Percentage: a.Percentage,
		TreatmentUsers: a.TreatmentUsers, ControlUsers: a.ControlUsers,
		Metrics: make([]apiserver.ReleaseMetricAnalysis, len(a.Metrics)),
	}
	for i, m := range a.Metrics {
		out.Metrics[i] = apiserver.ReleaseMetricAnalysis{
			EventKey: m.EventKey, Kind: apiserver.ReleaseMetricKind(m.Kind),
			BadDirection: apiserver.ReleaseBadDirection(m.BadDirection), Tolerance: m.Tolerance,
			Treatment: armOut(m.Treatment), Control: armOut(m.Control),
			Lift: nullableOf(m.Lift), CiLower: nullableOf(m.CILower), CiUpper: nullableOf(m.CIUpper),
			PValue: nullableOf(m.PValue), Regressed: m.Regressed,
		}
	}
	var srm *apiserver.ReleaseSampleRatio
	if a.SRM != nil {
		srm = &apiserver.ReleaseSampleRatio{
			Users: a.SRM.Users, TreatmentUsers: a.SRM.TreatmentUsers, ExpectedShare: a.SRM.ExpectedShare,
			PValue: a.SRM.PValue, Mismatch: a.SRM.Mismatch,
		}
	}
	out.Srm = nullableOf(srm)
	return out
}

func armOut(a release.ArmSummary) apiserver.ReleaseArmSummary {
	return apiserver.ReleaseArmSummary{Users: a.Users, Mean: a.Mean, Variance: a.Variance}
}
