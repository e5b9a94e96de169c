package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/notify"
)

// notificationLease is how long a claimed notification stays reserved for
// the instance sending it. A batch may hold several notifications for one
// receiver, sent one after another, so the lease outlasts a whole batch of
// timed-out requests (16 x 5 s) with room to spare; after it a crashed
// sender's claim lapses and another instance sends it.
const notificationLease = 2 * time.Minute

// notificationBatch is how many notifications one DeliverNotifications call
// claims and sends concurrently.
const notificationBatch = 16

// enqueue writes a notification to the outbox in q's transaction (spec,
// Notification events; docs/governance.md): one row per enabled webhook and
// per enabled chat integration of the environment whose event selection
// includes event (empty selects all). It commits or rolls back with the
// change that causes it, and nothing is sent before the commit. data is the
// payload's data (the flag after the change, or the change request); flag
// is what chat messages show of the flag, nil when there is none.
func enqueue(ctx context.Context, q *db.Queries, envID uuid.UUID, event, flagKey, actor string, data any, flag *eval.Flag) error {
	hooks, err := q.ListEnabledWebhooks(ctx, envID)
	if err != nil {
		return fmt.Errorf("list webhooks: %w", err)
	}
	chats, err := q.ListEnabledChatIntegrations(ctx, envID)
	if err != nil {
		return fmt.Errorf("list chat integrations: %w", err)
	}
	chats = slices.DeleteFunc(chats, func(c db.ChatIntegration) bool {
		return len(c.Events) > 0 && !slices.Contains(c.Events, event)
	})
	if len(hooks) == 0 && len(chats) == 0 {
		return nil
	}
	rawData, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	var rawFlag json.RawMessage
	if flag != nil {
		if rawFlag, err = json.Marshal(notify.FlagState{IsEnabled: flag.IsEnabled, RolloutPercentage: flag.RolloutPercentage}); err != nil {
			return err
		}
	}
	row := db.InsertNotificationParams{EnvironmentID: envID, Event: event, FlagKey: flagKey, Actor: actor, Data: rawData, Flag: rawFlag}
	for _, h := range hooks {
		row.WebhookID, row.IntegrationID = &h.ID, nil
		if err := q.InsertNotification(ctx, row); err != nil {
			return fmt.Errorf("enqueue notification: %w", err)
		}
	}
	for _, c := range chats {
		row.WebhookID, row.IntegrationID = nil, &c.ID
		if err := q.InsertNotification(ctx, row); err != nil {
			return fmt.Errorf("enqueue notification: %w", err)
		}
	}
	return nil
}

// changeRequestData is a change request as the API shows it, the data of
// change-request notifications.
func changeRequestData(cr db.ChangeRequest) map[string]any {
	return map[string]any{
		"id": cr.ID, "environment_id": cr.EnvironmentID, "flag_key": cr.FlagKey, "patch": cr.Patch,
		"requested_by": cr.RequestedBy, "status": cr.Status, "reviewed_by": cr.ReviewedBy,
		"reason": cr.Reason, "created_at": cr.CreatedAt, "reviewed_at": cr.ReviewedAt,
	}
}

// DeliverNotifications claims due notifications from the outbox, makes one
// delivery attempt for each, logs it, and then removes the notification or
// schedules its retry. It returns how many it claimed. Several instances
// may call it at once: each notification is claimed by one of them.
func (s *Service) DeliverNotifications(ctx context.Context) (int, error) {
	rows, err := db.New(s.pool).ClaimNotifications(ctx, db.ClaimNotificationsParams{
		LeaseSeconds: notificationLease.Seconds(), MaxRows: notificationBatch,
	})
	if err != nil {
		return 0, fmt.Errorf("claim notifications: %w", err)
	}
	// Targets are served concurrently; each target's notifications are sent
	// one after another in the order they were written, so a receiver sees
	// the events of one batch in order (order across retries is not kept).
	slices.SortStableFunc(rows, func(a, b db.NotificationOutbox) int { return a.OccurredAt.Compare(b.OccurredAt) })
	var order []uuid.UUID
	byTarget := map[uuid.UUID][]db.NotificationOutbox{}
	for _, row := range rows {
		target := row.ID
		switch {
		case row.WebhookID != nil:
			target = *row.WebhookID
		case row.IntegrationID != nil:
			target = *row.IntegrationID
		}
		if _, seen := byTarget[target]; !seen {
			order = append(order, target)
		}
		byTarget[target] = append(byTarget[target], row)
	}
	var wg sync.WaitGroup
	for _, target := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, row := range byTarget[target] {
				if err := s.deliver(ctx, row); err != nil && ctx.Err() == nil {
					// The lease runs out and the notification is claimed again.
					s.logger.WarnContext(ctx, "deliver notification", "err", err.Error(), "delivery_id", row.ID.String(), "event", row.Event)
				}
			}
		}()
	}
	wg.Wait()
	return len(rows), nil
}

// deliver makes one attempt of a claimed notification. Spec: a failed
// delivery is retried after 1 s, 5 s and 15 s (s.backoff), every attempt is
// logged, and a chat provider's 4xx is a rejection, not retried.
func (s *Service) deliver(ctx context.Context, row db.NotificationOutbox) error {
	q := db.New(s.pool)
	env, err := envelopeOf(ctx, q, row)
	if errors.Is(err, pgx.ErrNoRows) {
		return q.DeleteNotification(ctx, row.ID) // the environment is gone
	}
	if err != nil {
		return err
	}
	var res notify.Result
	switch {
	case row.WebhookID != nil:
		hook, err := q.GetWebhookByID(ctx, *row.WebhookID)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !hook.Enabled) {
			return q.DeleteNotification(ctx, row.ID) // disabled webhooks receive nothing
		}
		if err != nil {
			return err
		}
		if _, res, err = s.sendWebhook(ctx, q, hook, env); err != nil {
			return err
		}
	case row.IntegrationID != nil:
		ig, err := q.GetChatIntegrationByID(ctx, *row.IntegrationID)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !ig.Enabled) {
			return q.DeleteNotification(ctx, row.ID)
		}
		if err != nil {
			return err
		}
		if _, res, err = s.sendChat(ctx, q, ig, env); err != nil {
			return err
		}
		if res.Rejected() {
			return q.DeleteNotification(ctx, row.ID)
		}
	default:
		return q.DeleteNotification(ctx, row.ID)
	}
	if res.OK() || int(row.Attempts) > len(s.backoff) {
		return q.DeleteNotification(ctx, row.ID)
	}
	return q.RetryNotificationAfter(ctx, db.RetryNotificationAfterParams{
		ID: row.ID, DelaySeconds: s.backoff[row.Attempts-1].Seconds(),
	})
}

// envelopeOf builds the payload of an outbox row.
func envelopeOf(ctx context.Context, q *db.Queries, row db.NotificationOutbox) (notify.Envelope, error) {
	where, err := q.GetNotificationContext(ctx, row.EnvironmentID)
	if err != nil {
		return notify.Envelope{}, err
	}
	e := notify.Envelope{
		Event: row.Event, DeliveryID: row.ID, OccurredAt: row.OccurredAt.UTC(),
		Environment: notify.Ref{ID: where.EnvironmentID, Name: where.EnvironmentName},
		Project:     notify.Ref{ID: where.ProjectID, Name: where.ProjectName},
		Actor:       row.Actor, FlagKey: row.FlagKey, Data: row.Data,
	}
	if len(row.Flag) > 0 {
		var st notify.FlagState
		if err := json.Unmarshal(row.Flag, &st); err == nil {
			e.Flag = &st
		}
	}
	return e, nil
}

// sendWebhook makes one attempt and logs it.
func (s *Service) sendWebhook(ctx context.Context, q *db.Queries, hook db.Webhook, e notify.Envelope) (db.WebhookDelivery, notify.Result, error) {
	secret := ""
	if hook.Secret != nil {
		secret = *hook.Secret
	}
	res := s.notifier.SendWebhook(ctx, hook.URL, secret, e)
	if err := ctx.Err(); err != nil {
		return db.WebhookDelivery{}, res, err // shutting down: not an attempt; the lease lapses and it is sent again
	}
	d, err := q.InsertWebhookDelivery(context.WithoutCancel(ctx), db.InsertWebhookDeliveryParams{
		WebhookID: hook.ID, Event: e.Event, StatusCode: int32Ptr(res.StatusCode), ResponseBody: res.ResponseBody, Error: res.Error,
	})
	if err != nil {
		return db.WebhookDelivery{}, res, fmt.Errorf("log webhook delivery: %w", err)
	}
	if err := q.PruneWebhookDeliveries(context.WithoutCancel(ctx), hook.ID); err != nil {
		return d, res, fmt.Errorf("prune webhook deliveries: %w", err)
	}
	return d, res, nil
}

// sendChat makes one attempt and logs it; the test route uses it too, so a
// test message takes the real delivery path.
func (s *Service) sendChat(ctx context.Context, q *db.Queries, ig db.ChatIntegration, e notify.Envelope) (db.ChatDelivery, notify.Result, error) {
	res := s.notifier.SendChat(ctx, ig.Kind, ig.WebhookURL, e)
	if err := ctx.Err(); err != nil {
		return db.ChatDelivery{}, res, err // shutting down: not an attempt; the lease lapses and it is sent again
	}
	d, err := q.InsertChatDelivery(context.WithoutCancel(ctx), db.InsertChatDeliveryParams{
		IntegrationID: ig.ID, Event: e.Event, StatusCode: int32Ptr(res.StatusCode), ResponseBody: res.ResponseBody, Error: res.Error,
	})
	if err != nil {
		return db.ChatDelivery{}, res, fmt.Errorf("log chat delivery: %w", err)
	}
	if err := q.PruneChatDeliveries(context.WithoutCancel(ctx), ig.ID); err != nil {
		return d, res, fmt.Errorf("prune chat deliveries: %w", err)
	}
	return d, res, nil
}

func int32Ptr(v *int) *int32 {
	if v == nil {
		return nil
	}
	n := int32(*v)
	return &n
}
