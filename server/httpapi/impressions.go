package httpapi

import (
	"context"
	"encoding/json"

	"github.com/oapi-codegen/nullable"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/measure"
)

// IngestImpressions stores a batch of impressions. Batches over 500 items
// were already refused by limitBatch before the body was decoded.
func (h *Handlers) IngestImpressions(ctx context.Context, req apiserver.IngestImpressionsRequestObject) (apiserver.IngestImpressionsResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	items, err := decodeImpressions(*req.Body)
	if err != nil {
		return nil, err
	}
	if err := h.measure.IngestImpressions(ctx, auth.FromContext(ctx), req.EnvId, items); err != nil {
		return nil, err
	}
	return apiserver.IngestImpressions204Response{}, nil
}

// ListImpressions lists impressions newest first.
func (h *Handlers) ListImpressions(ctx context.Context, req apiserver.ListImpressionsRequestObject) (apiserver.ListImpressionsResponseObject, error) {
	p := req.Params
	page, err := h.measure.ListImpressions(ctx, auth.FromContext(ctx), req.EnvId, measure.ImpressionFilter{
		FlagKey: p.FlagKey, UserID: p.UserId, Value: p.Value, SinceID: p.SinceId, Limit: p.Limit, Offset: p.Offset,
	})
	if err != nil {
		return nil, err
	}
	out := apiserver.ListImpressions200JSONResponse{Items: make([]apiserver.Impression, len(page.Items)), Total: page.Total}
	for i, im := range page.Items {
		if out.Items[i], err = listedImpression(im); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// listedImpression converts a stored impression to the list's item; the raw
// export writes the same object (export.go, appendImpression).
func listedImpression(im db.Impression) (apiserver.Impression, error) {
	c := nullable.NewNullNullable[map[string]any]()
	if len(im.Context) > 0 {
		var m map[string]any
		if err := json.Unmarshal(im.Context, &m); err != nil {
			return apiserver.Impression{}, err
		}
		c = nullableOf(&m)
	}
	return apiserver.Impression{
		Id: im.ID, FlagKey: im.FlagKey, UserId: nullableOf(im.UserID), Value: im.Value,
		Context: c, EvaluatedAt: im.EvaluatedAt,
	}, nil
}

// GetImpressionStats returns per-flag impression statistics.
func (h *Handlers) GetImpressionStats(ctx context.Context, req apiserver.GetImpressionStatsRequestObject) (apiserver.GetImpressionStatsResponseObject, error) {
	rows, err := h.measure.ImpressionStats(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.GetImpressionStats200JSONResponse, len(rows))
	for i, r := range rows {
		out[i] = apiserver.ImpressionStats{
			FlagKey: r.FlagKey, Total: r.Total, TrueCount: r.TrueCount, FalseCount: r.FalseCount,
			UniqueUsers: r.UniqueUsers, LastSeen: r.LastSeen,
		}
	}
	return out, nil
}

// GetExposure returns the exposure breakdown of one flag.
func (h *Handlers) GetExposure(ctx context.Context, req apiserver.GetExposureRequestObject) (apiserver.GetExposureResponseObject, error) {
	e, err := h.measure.Exposure(ctx, auth.FromContext(ctx), req.EnvId, req.Params.FlagKey, req.Params.Days)
	if err != nil {
		return nil, err
	}
	out := apiserver.GetExposure200JSONResponse{
		FlagKey: e.FlagKey, TotalImpressions: e.TotalImpressions, TotalUsers: e.TotalUsers,
		Variants: make([]apiserver.ExposureVariant, len(e.Variants)),
		Timeline: make([]apiserver.ExposureDay, len(e.Timeline)),
	}
	for i, v := range e.Variants {
		out.Variants[i] = apiserver.ExposureVariant{Value: v.Value, Impressions: v.Impressions, UniqueUsers: v.UniqueUsers}
	}
	for i, d := range e.Timeline {
		out.Timeline[i] = apiserver.ExposureDay{Day: openapi_types.Date{Time: d.Day}, Value: d.Value, Count: d.Count}
	}
	return out, nil
}

// nullableValue is the value of an optional nullable field, nil when absent
// or null.
func nullableValue[T any](n nullable.Nullable[T]) *T {
	v, err := n.Get()
	if err != nil {
		return nil
	}
	return &v
}
