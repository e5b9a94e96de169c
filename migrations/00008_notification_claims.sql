-- A claimed notification records which claim holds it. The lease
-- (locked_until) is now short and renewed by its live sender while the
-- request is in flight, so a crashed sender's claims lapse within seconds; the
-- claim id lets the sender renew, retry or release only the rows it still
-- holds, never a row another instance claimed after its lease lapsed.

-- +goose Up
ALTER TABLE notification_outbox ADD COLUMN claim_id uuid;

-- +goose Down
ALTER TABLE notification_outbox DROP COLUMN claim_id;
