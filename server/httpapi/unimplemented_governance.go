package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
)

// These methods answer 501 until the governance work lands; it deletes
// them from this file as it implements them.

// ListChangeRequests is not built yet (governance).
func (h *Handlers) ListChangeRequests(context.Context, apiserver.ListChangeRequestsRequestObject) (apiserver.ListChangeRequestsResponseObject, error) {
	return nil, notImplemented("ListChangeRequests")
}

// CancelChangeRequest is not built yet (governance).
func (h *Handlers) CancelChangeRequest(context.Context, apiserver.CancelChangeRequestRequestObject) (apiserver.CancelChangeRequestResponseObject, error) {
	return nil, notImplemented("CancelChangeRequest")
}

// ApproveChangeRequest is not built yet (governance).
func (h *Handlers) ApproveChangeRequest(context.Context, apiserver.ApproveChangeRequestRequestObject) (apiserver.ApproveChangeRequestResponseObject, error) {
	return nil, notImplemented("ApproveChangeRequest")
}

// RejectChangeRequest is not built yet (governance).
func (h *Handlers) RejectChangeRequest(context.Context, apiserver.RejectChangeRequestRequestObject) (apiserver.RejectChangeRequestResponseObject, error) {
	return nil, notImplemented("RejectChangeRequest")
}

// ListFlagScheduledChanges is not built yet (governance).
func (h *Handlers) ListFlagScheduledChanges(context.Context, apiserver.ListFlagScheduledChangesRequestObject) (apiserver.ListFlagScheduledChangesResponseObject, error) {
	return nil, notImplemented("ListFlagScheduledChanges")
}

// CreateScheduledChange is not built yet (governance).
func (h *Handlers) CreateScheduledChange(context.Context, apiserver.CreateScheduledChangeRequestObject) (apiserver.CreateScheduledChangeResponseObject, error) {
	return nil, notImplemented("CreateScheduledChange")
}

// ListIntegrations is not built yet (governance).
func (h *Handlers) ListIntegrations(context.Context, apiserver.ListIntegrationsRequestObject) (apiserver.ListIntegrationsResponseObject, error) {
	return nil, notImplemented("ListIntegrations")
}

// CreateIntegration is not built yet (governance).
func (h *Handlers) CreateIntegration(context.Context, apiserver.CreateIntegrationRequestObject) (apiserver.CreateIntegrationResponseObject, error) {
	return nil, notImplemented("CreateIntegration")
}

// DeleteIntegration is not built yet (governance).
func (h *Handlers) DeleteIntegration(context.Context, apiserver.DeleteIntegrationRequestObject) (apiserver.DeleteIntegrationResponseObject, error) {
	return nil, notImplemented("DeleteIntegration")
}

// PatchIntegration is not built yet (governance).
func (h *Handlers) PatchIntegration(context.Context, apiserver.PatchIntegrationRequestObject) (apiserver.PatchIntegrationResponseObject, error) {
	return nil, notImplemented("PatchIntegration")
}

// ListIntegrationDeliveries is not built yet (governance).
func (h *Handlers) ListIntegrationDeliveries(context.Context, apiserver.ListIntegrationDeliveriesRequestObject) (apiserver.ListIntegrationDeliveriesResponseObject, error) {
	return nil, notImplemented("ListIntegrationDeliveries")
}

// TestIntegration is not built yet (governance).
func (h *Handlers) TestIntegration(context.Context, apiserver.TestIntegrationRequestObject) (apiserver.TestIntegrationResponseObject, error) {
	return nil, notImplemented("TestIntegration")
}

// ListScheduledChanges is not built yet (governance).
func (h *Handlers) ListScheduledChanges(context.Context, apiserver.ListScheduledChangesRequestObject) (apiserver.ListScheduledChangesResponseObject, error) {
	return nil, notImplemented("ListScheduledChanges")
}

// DeleteScheduledChange is not built yet (governance).
func (h *Handlers) DeleteScheduledChange(context.Context, apiserver.DeleteScheduledChangeRequestObject) (apiserver.DeleteScheduledChangeResponseObject, error) {
	return nil, notImplemented("DeleteScheduledChange")
}

// ListWebhooks is not built yet (governance).
func (h *Handlers) ListWebhooks(context.Context, apiserver.ListWebhooksRequestObject) (apiserver.ListWebhooksResponseObject, error) {
	return nil, notImplemented("ListWebhooks")
}

// CreateWebhook is not built yet (governance).
func (h *Handlers) CreateWebhook(context.Context, apiserver.CreateWebhookRequestObject) (apiserver.CreateWebhookResponseObject, error) {
	return nil, notImplemented("CreateWebhook")
}

// DeleteWebhook is not built yet (governance).
func (h *Handlers) DeleteWebhook(context.Context, apiserver.DeleteWebhookRequestObject) (apiserver.DeleteWebhookResponseObject, error) {
	return nil, notImplemented("DeleteWebhook")
}

// PatchWebhook is not built yet (governance).
func (h *Handlers) PatchWebhook(context.Context, apiserver.PatchWebhookRequestObject) (apiserver.PatchWebhookResponseObject, error) {
	return nil, notImplemented("PatchWebhook")
}

// ListWebhookDeliveries is not built yet (governance).
func (h *Handlers) ListWebhookDeliveries(context.Context, apiserver.ListWebhookDeliveriesRequestObject) (apiserver.ListWebhookDeliveriesResponseObject, error) {
	return nil, notImplemented("ListWebhookDeliveries")
}
