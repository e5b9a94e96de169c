-- +goose Up

-- The notification outbox (docs/governance.md). A write that causes a
-- notification inserts one row per receiving webhook or chat integration in
-- its own transaction, so a notification exists exactly when its change
-- committed. Delivery workers claim due rows with FOR UPDATE SKIP LOCKED and
-- a lease (locked_until), send, log the attempt and then delete the row or
-- push next_attempt_at back by the retry backoff. A crash between commit and
-- delivery, or during a send, leaves the row to be claimed again.
CREATE TABLE notification_outbox (
    -- Also the delivery id (X-Service-Delivery): stable across retries.
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id  uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    webhook_id      uuid        REFERENCES webhooks (id) ON DELETE CASCADE,
    integration_id  uuid        REFERENCES chat_integrations (id) ON DELETE CASCADE,
    event           text        NOT NULL,
    flag_key        text        NOT NULL,
    actor           text        NOT NULL,
    -- The payload's data: the flag after the change, or the change request.
    data            jsonb       NOT NULL,
    -- The flag as it stands after the event, for chat messages (enabled,
    -- rollout); NULL when there is none.
    flag            jsonb,
    occurred_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    locked_until    timestamptz,
    CONSTRAINT notification_outbox_one_target_check CHECK ((webhook_id IS NULL) <> (integration_id IS NULL))
);
CREATE INDEX notification_outbox_due_idx ON notification_outbox (next_attempt_at);
CREATE INDEX notification_outbox_webhook_id_idx ON notification_outbox (webhook_id) WHERE webhook_id IS NOT NULL;
CREATE INDEX notification_outbox_integration_id_idx ON notification_outbox (integration_id) WHERE integration_id IS NOT NULL;

-- +goose Down

DROP TABLE notification_outbox;
