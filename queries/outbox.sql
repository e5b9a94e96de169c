-- name: InsertNotification :exec
INSERT INTO notification_outbox (environment_id, webhook_id, integration_id, event, flag_key, actor, data, flag)
VALUES (@environment_id, @webhook_id, @integration_id, @event, @flag_key, @actor, @data, @flag);

-- name: ClaimNotifications :many
-- RETURNING does not keep the subquery's order: the caller sorts.
-- Claims due notifications for one delivery attempt each: the lease keeps
-- other instances off them while the request is in flight, SKIP LOCKED keeps
-- two claims from taking the same row. A worker that dies mid-send loses
-- nothing: the lease runs out and the row is claimed again.
UPDATE notification_outbox o
SET locked_until = clock_timestamp() + make_interval(secs => @lease_seconds::float8), attempts = o.attempts + 1
WHERE o.id IN (
    SELECT id FROM notification_outbox
    WHERE next_attempt_at <= clock_timestamp() AND (locked_until IS NULL OR locked_until <= clock_timestamp())
    ORDER BY next_attempt_at, occurred_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
RETURNING o.*;

-- name: DeleteNotification :exec
DELETE FROM notification_outbox WHERE id = @id;

-- name: RetryNotificationAfter :exec
UPDATE notification_outbox
SET next_attempt_at = clock_timestamp() + make_interval(secs => @delay_seconds::float8), locked_until = NULL
WHERE id = @id;

-- name: GetNotificationContext :one
-- What a payload says about where the change happened.
SELECT e.id AS environment_id, e.name AS environment_name, p.id AS project_id, p.name AS project_name
FROM environments e JOIN projects p ON p.id = e.project_id
WHERE e.id = @environment_id;
