package httpapi

import (
	"context"
	"encoding/json"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/core"
)

// ListSegments lists an environment's segments.
func (h *Handlers) ListSegments(ctx context.Context, req apiserver.ListSegmentsRequestObject) (apiserver.ListSegmentsResponseObject, error) {
	segs, err := h.core.ListSegments(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListSegments200JSONResponse, len(segs))
	for i, s := range segs {
		if out[i], err = segment(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetSegment returns one segment.
func (h *Handlers) GetSegment(ctx context.Context, req apiserver.GetSegmentRequestObject) (apiserver.GetSegmentResponseObject, error) {
	s, err := h.core.GetSegment(ctx, auth.FromContext(ctx), req.EnvId, req.Key)
	if err != nil {
		return nil, err
	}
	out, err := segment(s)
	return apiserver.GetSegment200JSONResponse(out), err
}

// CreateSegment creates a segment.
func (h *Handlers) CreateSegment(ctx context.Context, req apiserver.CreateSegmentRequestObject) (apiserver.CreateSegmentResponseObject, error) {
	in := core.SegmentInput{Key: req.Body.Key, Name: &req.Body.Name}
	if v, err := req.Body.Description.Get(); err == nil {
		in.Description = &v
	}
	rules, err := evalRules(req.Body.Rules)
	if err != nil {
		return nil, err
	}
	in.Rules = rules
	s, err := h.core.CreateSegment(ctx, auth.FromContext(ctx), req.EnvId, in)
	if err != nil {
		return nil, err
	}
	out, err := segment(s)
	return apiserver.CreateSegment200JSONResponse(out), err
}

// PatchSegment changes a segment; flags that reference it are re-broadcast.
func (h *Handlers) PatchSegment(ctx context.Context, req apiserver.PatchSegmentRequestObject) (apiserver.PatchSegmentResponseObject, error) {
	in := core.SegmentInput{Name: req.Body.Name}
	if req.Body.Description.IsSpecified() {
		if v, err := req.Body.Description.Get(); err == nil {
			in.Description = &v
		} else {
			in.ClearDescription = true
		}
	}
	rules, err := evalRules(req.Body.Rules)
	if err != nil {
		return nil, err
	}
	in.Rules = rules
	s, err := h.core.PatchSegment(ctx, auth.FromContext(ctx), req.EnvId, req.Key, in)
	if err != nil {
		return nil, err
	}
	out, err := segment(s)
	return apiserver.PatchSegment200JSONResponse(out), err
}

// DeleteSegment deletes a segment.
func (h *Handlers) DeleteSegment(ctx context.Context, req apiserver.DeleteSegmentRequestObject) (apiserver.DeleteSegmentResponseObject, error) {
	if err := h.core.DeleteSegment(ctx, auth.FromContext(ctx), req.EnvId, req.Key); err != nil {
		return nil, err
	}
	return apiserver.DeleteSegment204Response{}, nil
}

// evalRules converts the API's targeting rules to the wire model; the two
// share one JSON shape.
func evalRules(in *[]apiserver.TargetingRule) (*[]eval.Rule, error) {
	if in == nil {
		return nil, nil
	}
	raw, err := json.Marshal(*in)
	if err != nil {
		return nil, err
	}
	var out []eval.Rule
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func segment(s db.Segment) (apiserver.Segment, error) {
	out := apiserver.Segment{
		Id: s.ID, EnvironmentId: s.EnvironmentID, Key: s.Key, Name: s.Name,
		Description: nullableOf(s.Description), CreatedAt: s.CreatedAt,
	}
	if err := json.Unmarshal(s.Rules, &out.Rules); err != nil {
		return apiserver.Segment{}, err
	}
	if out.Rules == nil {
		out.Rules = []apiserver.TargetingRule{}
	}
	return out, nil
}
