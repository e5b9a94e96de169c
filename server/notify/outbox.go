package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
)

// Enqueue writes a notification to the outbox in q's transaction
// (docs/reference/notifications.md, Delivery guarantees; docs/governance.md):
// one row per enabled webhook and per enabled chat integration of the
// environment whose event selection includes event (empty selects all). It
// commits or rolls back with the change that causes it, and nothing is sent
// before the commit. data is the payload's data (the flag after the change, or
// the change request); flag is what chat messages show of the flag, nil when
// there is none.
func Enqueue(ctx context.Context, q *db.Queries, envID uuid.UUID, event, flagKey, actor string, data any, flag *eval.Flag) error {
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
		if rawFlag, err = json.Marshal(FlagState{IsEnabled: flag.IsEnabled, RolloutPercentage: flag.RolloutPercentage}); err != nil {
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

// ChangeRequestData is a change request as the API shows it, the data of
// change-request notifications.
func ChangeRequestData(cr db.ChangeRequest) map[string]any {
	return map[string]any{
		"id": cr.ID, "environment_id": cr.EnvironmentID, "flag_key": cr.FlagKey, "patch": cr.Patch,
		"requested_by": cr.RequestedBy, "status": cr.Status, "reviewed_by": cr.ReviewedBy,
		"reason": cr.Reason, "created_at": cr.CreatedAt, "reviewed_at": cr.ReviewedAt,
	}
}
