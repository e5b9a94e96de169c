package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

var (
	errWebhookNotFound     = apperr.E(apperr.NotFound, "webhook not found")
	errIntegrationNotFound = apperr.E(apperr.NotFound, "chat integration not found")
)

// ListWebhooks returns an environment's webhooks, newest first (project admin).
func (s *Service) ListWebhooks(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]db.Webhook, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.AdminRead); err != nil {
		return nil, err
	}
	return q.ListWebhooks(ctx, envID)
}

// WebhookInput creates a webhook.
type WebhookInput struct {
	Name, URL string
	Secret    *string // empty or nil: unsigned deliveries
	Enabled   *bool   // default true
}

// CreateWebhook adds a webhook to an environment (project admin).
func (s *Service) CreateWebhook(ctx context.Context, p *auth.Principal, envID uuid.UUID, in WebhookInput) (db.Webhook, error) {
	if err := checkWebhook(in.Name, in.URL); err != nil {
		return db.Webhook{}, err
	}
	h, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.Webhook, error) {
		env, err := access.Env(ctx, q, p, envID, access.Admin)
		if err != nil {
			return db.Webhook{}, err
		}
		enabled := in.Enabled == nil || *in.Enabled
		h, err := q.InsertWebhook(ctx, db.InsertWebhookParams{
			EnvironmentID: envID, Name: strings.TrimSpace(in.Name), URL: strings.TrimSpace(in.URL), Secret: nonEmpty(in.Secret), Enabled: enabled,
		})
		if err != nil {
			return db.Webhook{}, err
		}
		return h, s.record(ctx, q, env, audit.Change{Action: "webhook.created", Resource: webhookResource(h), After: webhookData(h)})
	})
	return h, store.AdaptError(err)
}

// WebhookPatch changes the fields of a webhook that are set.
type WebhookPatch struct {
	Name, URL *string
	SetSecret bool    // Secret replaces the secret; nil or empty removes it
	Secret    *string // the new secret when SetSecret
	Enabled   *bool
}

// PatchWebhook changes a webhook (project admin).
func (s *Service) PatchWebhook(ctx context.Context, p *auth.Principal, envID, id uuid.UUID, in WebhookPatch) (db.Webhook, error) {
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.Webhook, error) {
		env, err := access.Env(ctx, q, p, envID, access.Admin)
		if err != nil {
			return db.Webhook{}, err
		}
		h, err := q.GetWebhook(ctx, db.GetWebhookParams{EnvironmentID: envID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return db.Webhook{}, errWebhookNotFound
		}
		if err != nil {
			return db.Webhook{}, err
		}
		before := h
		if in.Name != nil {
			h.Name = strings.TrimSpace(*in.Name)
		}
		if in.URL != nil {
			h.URL = strings.TrimSpace(*in.URL)
		}
		if in.SetSecret {
			h.Secret = nonEmpty(in.Secret)
		}
		if in.Enabled != nil {
			h.Enabled = *in.Enabled
		}
		if err := checkWebhook(h.Name, h.URL); err != nil {
			return db.Webhook{}, err
		}
		after, err := q.UpdateWebhook(ctx, db.UpdateWebhookParams{ID: h.ID, Name: h.Name, URL: h.URL, Secret: h.Secret, Enabled: h.Enabled})
		if err != nil {
			return db.Webhook{}, err
		}
		return after, s.record(ctx, q, env, audit.Change{
			Action: "webhook.updated", Resource: webhookResource(after), Before: webhookData(before), After: webhookData(after),
		})
	})
	return out, store.AdaptError(err)
}

// DeleteWebhook removes a webhook, its delivery log and its undelivered
// notifications (project admin).
func (s *Service) DeleteWebhook(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) error {
	return store.AdaptError(store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		env, err := access.Env(ctx, q, p, envID, access.Admin)
		if err != nil {
			return err
		}
		h, err := q.DeleteWebhook(ctx, db.DeleteWebhookParams{EnvironmentID: envID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return errWebhookNotFound
		}
		if err != nil {
			return err
		}
		return s.record(ctx, q, env, audit.Change{Action: "webhook.deleted", Resource: webhookResource(h), Before: webhookData(h)})
	}))
}

// ListWebhookDeliveries returns a webhook's latest 100 delivery attempts,
// newest first (project admin).
func (s *Service) ListWebhookDeliveries(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) ([]db.WebhookDelivery, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.AdminRead); err != nil {
		return nil, err
	}
	if _, err := q.GetWebhook(ctx, db.GetWebhookParams{EnvironmentID: envID, ID: id}); errors.Is(err, pgx.ErrNoRows) {
		return nil, errWebhookNotFound
	} else if err != nil {
		return nil, err
	}
	return q.ListWebhookDeliveries(ctx, id)
}

func checkWebhook(name, url string) error {
	if strings.TrimSpace(name) == "" {
		return apperr.Field("name", "must not be empty")
	}
	if strings.TrimSpace(url) == "" {
		return apperr.Field("url", "must not be empty")
	}
	if msg := ValidWebhookURL(url); msg != "" {
		return apperr.Field("url", msg)
	}
	return nil
}

// ListIntegrations returns an environment's chat integrations, newest first
// (project admin).
func (s *Service) ListIntegrations(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]db.ChatIntegration, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.AdminRead); err != nil {
		return nil, err
	}
	return q.ListChatIntegrations(ctx, envID)
}

// IntegrationInput creates a chat integration.
type IntegrationInput struct {
	Kind, Name, WebhookURL string
	Events                 []string // empty: every event
	Enabled                *bool    // default true
}

// CreateIntegration connects a chat integration (project admin). An unknown
// kind, a non-loopback plaintext URL and unknown events are 422
// (docs/reference/notifications.md, Integration records).
func (s *Service) CreateIntegration(ctx context.Context, p *auth.Principal, envID uuid.UUID, in IntegrationInput) (db.ChatIntegration, error) {
	ig, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.ChatIntegration, error) {
		env, err := access.Env(ctx, q, p, envID, access.Admin)
		if err != nil {
			return db.ChatIntegration{}, err
		}
		if in.Kind != KindSlack && in.Kind != KindTeams {
			return db.ChatIntegration{}, apperr.Field("kind", "must be slack or teams")
		}
		if err := checkIntegration(in.Name, in.WebhookURL, in.Events); err != nil {
			return db.ChatIntegration{}, err
		}
		events := in.Events
		if events == nil {
			events = []string{}
		}
		ig, err := q.InsertChatIntegration(ctx, db.InsertChatIntegrationParams{
			EnvironmentID: envID, Kind: in.Kind, Name: strings.TrimSpace(in.Name), WebhookURL: in.WebhookURL,
			Events: events, Enabled: in.Enabled == nil || *in.Enabled,
		})
		if err != nil {
			return db.ChatIntegration{}, err
		}
		return ig, s.record(ctx, q, env, audit.Change{Action: "chat.created", Resource: integrationResource(ig), After: integrationData(ig)})
	})
	return ig, store.AdaptError(err)
}

// IntegrationPatch changes the fields of a chat integration that are set.
type IntegrationPatch struct {
	Name, WebhookURL *string
	Events           *[]string
	Enabled          *bool
}

// PatchIntegration changes a chat integration (project admin).
func (s *Service) PatchIntegration(ctx context.Context, p *auth.Principal, envID, id uuid.UUID, in IntegrationPatch) (db.ChatIntegration, error) {
	out, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.ChatIntegration, error) {
		env, err := access.Env(ctx, q, p, envID, access.Admin)
		if err != nil {
			return db.ChatIntegration{}, err
		}
		ig, err := q.GetChatIntegration(ctx, db.GetChatIntegrationParams{EnvironmentID: envID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return db.ChatIntegration{}, errIntegrationNotFound
		}
		if err != nil {
			return db.ChatIntegration{}, err
		}
		before := ig
		if in.Name != nil {
			ig.Name = strings.TrimSpace(*in.Name)
		}
		if in.WebhookURL != nil {
			ig.WebhookURL = *in.WebhookURL
		}
		if in.Events != nil {
			ig.Events = *in.Events
			if ig.Events == nil {
				ig.Events = []string{}
			}
		}
		if in.Enabled != nil {
			ig.Enabled = *in.Enabled
		}
		if err := checkIntegration(ig.Name, ig.WebhookURL, ig.Events); err != nil {
			return db.ChatIntegration{}, err
		}
		after, err := q.UpdateChatIntegration(ctx, db.UpdateChatIntegrationParams{
			ID: ig.ID, Name: ig.Name, WebhookURL: ig.WebhookURL, Events: ig.Events, Enabled: ig.Enabled,
		})
		if err != nil {
			return db.ChatIntegration{}, err
		}
		return after, s.record(ctx, q, env, audit.Change{
			Action: "chat.updated", Resource: integrationResource(after), Before: integrationData(before), After: integrationData(after),
		})
	})
	return out, store.AdaptError(err)
}

// DeleteIntegration disconnects a chat integration (project admin).
func (s *Service) DeleteIntegration(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) error {
	return store.AdaptError(store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		env, err := access.Env(ctx, q, p, envID, access.Admin)
		if err != nil {
			return err
		}
		ig, err := q.DeleteChatIntegration(ctx, db.DeleteChatIntegrationParams{EnvironmentID: envID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return errIntegrationNotFound
		}
		if err != nil {
			return err
		}
		return s.record(ctx, q, env, audit.Change{Action: "chat.deleted", Resource: integrationResource(ig), Before: integrationData(ig)})
	}))
}

// ListIntegrationDeliveries returns an integration's retained delivery
// attempts (the latest 200), newest first (project admin).
func (s *Service) ListIntegrationDeliveries(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) ([]db.ChatDelivery, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.AdminRead); err != nil {
		return nil, err
	}
	if _, err := q.GetChatIntegration(ctx, db.GetChatIntegrationParams{EnvironmentID: envID, ID: id}); errors.Is(err, pgx.ErrNoRows) {
		return nil, errIntegrationNotFound
	} else if err != nil {
		return nil, err
	}
	return q.ListChatDeliveries(ctx, id)
}

// TestIntegration sends the event "test" to a chat integration through the real
// delivery path, one attempt, and returns its delivery row
// (docs/reference/notifications.md, Integration records). It is an explicit
// request, so it is sent even while the integration is disabled or not
// subscribed to anything in particular.
func (s *Service) TestIntegration(ctx context.Context, p *auth.Principal, envID, id uuid.UUID) (db.ChatDelivery, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Admin); err != nil {
		return db.ChatDelivery{}, err
	}
	ig, err := q.GetChatIntegration(ctx, db.GetChatIntegrationParams{EnvironmentID: envID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.ChatDelivery{}, errIntegrationNotFound
	}
	if err != nil {
		return db.ChatDelivery{}, err
	}
	e, err := envelopeOf(ctx, q, db.NotificationOutbox{
		ID: uuid.New(), EnvironmentID: envID, Event: EventTest, Actor: p.Actor(),
		Data: []byte(`{"message":"Switchyard can reach this channel"}`), OccurredAt: s.now(),
	})
	if err != nil {
		return db.ChatDelivery{}, err
	}
	d, _, err := s.sendChat(ctx, q, ig, e)
	return d, err
}

func checkIntegration(name, url string, events []string) error {
	if strings.TrimSpace(name) == "" {
		return apperr.Field("name", "must not be empty")
	}
	if msg := ValidChatURL(url); msg != "" {
		return apperr.Field("webhook_url", msg)
	}
	for i, e := range events {
		if !slices.Contains(Events, e) {
			return apperr.Field(fmt.Sprintf("events.%d", i), fmt.Sprintf("%q is not a notification event", e))
		}
	}
	return nil
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// record appends a change of one of env's webhooks or chat integrations to
// the audit trail, in q's transaction.
func (s *Service) record(ctx context.Context, q *db.Queries, env db.Environment, c audit.Change) error {
	c.ProjectID, c.EnvironmentID = audit.ID(env.ProjectID), audit.ID(env.ID)
	return s.trail.Record(ctx, q, c)
}

func webhookResource(h db.Webhook) audit.Resource {
	return audit.Resource{Type: audit.Webhook, ID: h.ID.String(), Name: audit.Str(h.Name)}
}

// webhookData is a webhook as the API shows it: whether it has a secret,
// never the secret.
func webhookData(h db.Webhook) map[string]any {
	return map[string]any{
		"id": h.ID, "environment_id": h.EnvironmentID, "name": h.Name, "url": h.URL,
		"has_secret": h.Secret != nil && *h.Secret != "", "enabled": h.Enabled, "created_at": h.CreatedAt,
	}
}

func integrationResource(ig db.ChatIntegration) audit.Resource {
	return audit.Resource{Type: audit.Chat, ID: ig.ID.String(), Name: audit.Str(ig.Name)}
}

// integrationData is a chat integration as the API shows it: its URL, a
// credential, only as a preview.
func integrationData(ig db.ChatIntegration) map[string]any {
	return map[string]any{
		"id": ig.ID, "environment_id": ig.EnvironmentID, "kind": ig.Kind, "name": ig.Name,
		"webhook_url_preview": Preview(ig.WebhookURL), "events": ig.Events, "enabled": ig.Enabled, "created_at": ig.CreatedAt,
	}
}
