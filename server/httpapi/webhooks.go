package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/notify"
)

// ListWebhooks lists an environment's webhooks.
func (h *Handlers) ListWebhooks(ctx context.Context, req apiserver.ListWebhooksRequestObject) (apiserver.ListWebhooksResponseObject, error) {
	rows, err := h.notify.ListWebhooks(ctx, auth.FromContext(ctx), req.EnvId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListWebhooks200JSONResponse, 0, len(rows))
	for _, r := range rows {
		out = append(out, webhook(r))
	}
	return out, nil
}

// CreateWebhook adds a webhook.
func (h *Handlers) CreateWebhook(ctx context.Context, req apiserver.CreateWebhookRequestObject) (apiserver.CreateWebhookResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	w, err := h.notify.CreateWebhook(ctx, auth.FromContext(ctx), req.EnvId, notify.WebhookInput{
		Name: req.Body.Name, URL: req.Body.Url, Secret: req.Body.Secret, Enabled: req.Body.Enabled,
	})
	if err != nil {
		return nil, err
	}
	return apiserver.CreateWebhook200JSONResponse(webhook(w)), nil
}

// PatchWebhook changes a webhook.
func (h *Handlers) PatchWebhook(ctx context.Context, req apiserver.PatchWebhookRequestObject) (apiserver.PatchWebhookResponseObject, error) {
	if req.Body == nil {
		return nil, apperr.E(apperr.BadRequest, "request body is required")
	}
	in := notify.WebhookPatch{Name: req.Body.Name, URL: req.Body.Url, Enabled: req.Body.Enabled}
	if req.Body.Secret.IsSpecified() {
		in.SetSecret = true
		if !req.Body.Secret.IsNull() {
			s := req.Body.Secret.MustGet()
			in.Secret = &s
		}
	}
	w, err := h.notify.PatchWebhook(ctx, auth.FromContext(ctx), req.EnvId, req.Id, in)
	if err != nil {
		return nil, err
	}
	return apiserver.PatchWebhook200JSONResponse(webhook(w)), nil
}

// DeleteWebhook removes a webhook.
func (h *Handlers) DeleteWebhook(ctx context.Context, req apiserver.DeleteWebhookRequestObject) (apiserver.DeleteWebhookResponseObject, error) {
	if err := h.notify.DeleteWebhook(ctx, auth.FromContext(ctx), req.EnvId, req.Id); err != nil {
		return nil, err
	}
	return apiserver.DeleteWebhook204Response{}, nil
}

// ListWebhookDeliveries lists a webhook's latest delivery attempts.
func (h *Handlers) ListWebhookDeliveries(ctx context.Context, req apiserver.ListWebhookDeliveriesRequestObject) (apiserver.ListWebhookDeliveriesResponseObject, error) {
	rows, err := h.notify.ListWebhookDeliveries(ctx, auth.FromContext(ctx), req.EnvId, req.Id)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListWebhookDeliveries200JSONResponse, 0, len(rows))
	for _, r := range rows {
		out = append(out, apiserver.WebhookDelivery{
			Id: r.ID, WebhookId: r.WebhookID, Event: r.Event, StatusCode: nullableOf(intPtr(r.StatusCode)),
			ResponseBody: nullableOf(r.ResponseBody), Error: nullableOf(r.Error), DeliveredAt: r.DeliveredAt,
		})
	}
	return out, nil
}

// webhook is a webhook as the API shows it: the secret never leaves.
func webhook(w db.Webhook) apiserver.Webhook {
	return apiserver.Webhook{
		Id: w.ID, EnvironmentId: w.EnvironmentID, Name: w.Name, Url: w.URL,
		HasSecret: w.Secret != nil && *w.Secret != "", Enabled: w.Enabled, CreatedAt: w.CreatedAt,
	}
}

func intPtr(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}
