package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
)

// These methods answer 501 until the measurement work lands; it deletes
// them from this file as it implements them.

// IngestEvents is not built yet (measurement).
func (h *Handlers) IngestEvents(context.Context, apiserver.IngestEventsRequestObject) (apiserver.IngestEventsResponseObject, error) {
	return nil, notImplemented("IngestEvents")
}

// ListEventKeys is not built yet (measurement).
func (h *Handlers) ListEventKeys(context.Context, apiserver.ListEventKeysRequestObject) (apiserver.ListEventKeysResponseObject, error) {
	return nil, notImplemented("ListEventKeys")
}

// ListExperiments is not built yet (measurement).
func (h *Handlers) ListExperiments(context.Context, apiserver.ListExperimentsRequestObject) (apiserver.ListExperimentsResponseObject, error) {
	return nil, notImplemented("ListExperiments")
}

// CreateExperiment is not built yet (measurement).
func (h *Handlers) CreateExperiment(context.Context, apiserver.CreateExperimentRequestObject) (apiserver.CreateExperimentResponseObject, error) {
	return nil, notImplemented("CreateExperiment")
}

// DeleteExperiment is not built yet (measurement).
func (h *Handlers) DeleteExperiment(context.Context, apiserver.DeleteExperimentRequestObject) (apiserver.DeleteExperimentResponseObject, error) {
	return nil, notImplemented("DeleteExperiment")
}

// GetExperiment is not built yet (measurement).
func (h *Handlers) GetExperiment(context.Context, apiserver.GetExperimentRequestObject) (apiserver.GetExperimentResponseObject, error) {
	return nil, notImplemented("GetExperiment")
}

// PatchExperiment is not built yet (measurement).
func (h *Handlers) PatchExperiment(context.Context, apiserver.PatchExperimentRequestObject) (apiserver.PatchExperimentResponseObject, error) {
	return nil, notImplemented("PatchExperiment")
}

// GetExperimentResults is not built yet (measurement).
func (h *Handlers) GetExperimentResults(context.Context, apiserver.GetExperimentResultsRequestObject) (apiserver.GetExperimentResultsResponseObject, error) {
	return nil, notImplemented("GetExperimentResults")
}

// ListImpressions is not built yet (measurement).
func (h *Handlers) ListImpressions(context.Context, apiserver.ListImpressionsRequestObject) (apiserver.ListImpressionsResponseObject, error) {
	return nil, notImplemented("ListImpressions")
}

// IngestImpressions is not built yet (measurement).
func (h *Handlers) IngestImpressions(context.Context, apiserver.IngestImpressionsRequestObject) (apiserver.IngestImpressionsResponseObject, error) {
	return nil, notImplemented("IngestImpressions")
}

// GetExposure is not built yet (measurement).
func (h *Handlers) GetExposure(context.Context, apiserver.GetExposureRequestObject) (apiserver.GetExposureResponseObject, error) {
	return nil, notImplemented("GetExposure")
}

// GetImpressionStats is not built yet (measurement).
func (h *Handlers) GetImpressionStats(context.Context, apiserver.GetImpressionStatsRequestObject) (apiserver.GetImpressionStatsResponseObject, error) {
	return nil, notImplemented("GetImpressionStats")
}
