package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/notify"
)

// ListIntegrations lists an environment's chat integrations, URLs elided.
func (h *Handlers) ListIntegrations(ctx context.Context, req apiserver.ListIntegrationsRequestObject) (apiserver.ListIntegrationsResponseObject, error) {
	rows, err := h.notify.ListIntegrations(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListIntegrations200JSONResponse, 0, len(rows))
	for _, r := range rows {
		out = append(out, integration(r))
	}
	return out, nil
}

// CreateIntegration connects a chat integration.
func (h *Handlers) CreateIntegration(ctx context.Context, req apiserver.CreateIntegrationRequestObject) (apiserver.CreateIntegrationResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	in := notify.IntegrationInput{Kind: string(req.Body.Kind), Name: req.Body.Name, WebhookURL: req.Body.WebhookUrl, Enabled: req.Body.Enabled}
	if req.Body.Events != nil {
		in.Events = eventNames(*req.Body.Events)
	}
	ig, err := h.notify.CreateIntegration(ctx, auth.FromContext(ctx), req.EnvId, in)
	if err != nil {
		return nil, err
	}
	return apiserver.CreateIntegration200JSONResponse(integration(ig)), nil
}

// PatchIntegration changes a chat integration.
func (h *Handlers) PatchIntegration(ctx context.Context, req apiserver.PatchIntegrationRequestObject) (apiserver.PatchIntegrationResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	in := notify.IntegrationPatch{Name: req.Body.Name, WebhookURL: req.Body.WebhookUrl, Enabled: req.Body.Enabled}
	if req.Body.Events != nil {
		events := eventNames(*req.Body.Events)
		in.Events = &events
	}
	ig, err := h.notify.PatchIntegration(ctx, auth.FromContext(ctx), req.EnvId, req.Id, in)
	if err != nil {
		return nil, err
	}
	return apiserver.PatchIntegration200JSONResponse(integration(ig)), nil
}

// DeleteIntegration disconnects a chat integration.
func (h *Handlers) DeleteIntegration(ctx context.Context, req apiserver.DeleteIntegrationRequestObject) (apiserver.DeleteIntegrationResponseObject, error) {
	if err := h.notify.DeleteIntegration(ctx, auth.FromContext(ctx), req.EnvId, req.Id); err != nil {
		return nil, err
	}
	return apiserver.DeleteIntegration204Response{}, nil
}

// TestIntegration sends the test event and answers its delivery row.
func (h *Handlers) TestIntegration(ctx context.Context, req apiserver.TestIntegrationRequestObject) (apiserver.TestIntegrationResponseObject, error) {
	d, err := h.notify.TestIntegration(ctx, auth.FromContext(ctx), req.EnvId, req.Id)
	if err != nil {
		return nil, err
	}
	return apiserver.TestIntegration200JSONResponse(chatDelivery(d)), nil
}

// ListIntegrationDeliveries lists an integration's retained delivery attempts.
func (h *Handlers) ListIntegrationDeliveries(ctx context.Context, req apiserver.ListIntegrationDeliveriesRequestObject) (apiserver.ListIntegrationDeliveriesResponseObject, error) {
	rows, err := h.notify.ListIntegrationDeliveries(ctx, auth.FromContext(ctx), req.EnvId, req.Id)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListIntegrationDeliveries200JSONResponse, 0, len(rows))
	for _, r := range rows {
		out = append(out, chatDelivery(r))
	}
	return out, nil
}

// integration is a chat integration as the API shows it: the URL, a
// credential, only as a preview (docs/reference/notifications.md,
// Integration records).
func integration(ig db.ChatIntegration) apiserver.ChatIntegration {
	events := make([]apiserver.NotificationEvent, 0, len(ig.Events))
	for _, e := range ig.Events {
		events = append(events, apiserver.NotificationEvent(e))
	}
	return apiserver.ChatIntegration{
		Id: ig.ID, EnvironmentId: ig.EnvironmentID, Kind: apiserver.ChatKind(ig.Kind), Name: ig.Name,
		WebhookUrlPreview: notify.Preview(ig.WebhookURL), Events: events, Enabled: ig.Enabled, CreatedAt: ig.CreatedAt,
	}
}

func chatDelivery(d db.ChatDelivery) apiserver.ChatDelivery {
	return apiserver.ChatDelivery{
		Id: d.ID, IntegrationId: d.IntegrationID, Event: d.Event, StatusCode: nullableOf(intPtr(d.StatusCode)),
		ResponseBody: nullableOf(d.ResponseBody), Error: nullableOf(d.Error), DeliveredAt: d.DeliveredAt,
	}
}

func eventNames(in []apiserver.NotificationEvent) []string {
	out := make([]string, 0, len(in))
	for _, e := range in {
		out = append(out, string(e))
	}
	return out
}
