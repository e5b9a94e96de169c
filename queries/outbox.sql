-- name: InsertNotification :exec
INSERT INTO notification_outbox (environment_id, webhook_id, integration_id, event, flag_key, actor, data, flag)
VALUES (@environment_id, @webhook_id, @integration_id, @event, @flag_key, @actor, @data, @flag);

-- name: ClaimNotifications :many
-- RETURNING does not keep the subquery's order: the caller sorts.
-- Claims due notifications for one delivery attempt each under claim_id: the
-- lease keeps other instances off them while the request is in flight (the
-- sender renews it with ExtendNotificationClaim), SKIP LOCKED keeps two
-- claims from taking the same row. A worker that dies mid-send loses
-- nothing: its lease runs out within seconds and the row is claimed again.
UPDATE notification_outbox o
SET locked_until = clock_timestamp() + make_interval(secs => @lease_seconds::float8), attempts = o.attempts + 1,
    claim_id = @claim_id::uuid
WHERE o.id IN (
    SELECT id FROM notification_outbox
    WHERE next_attempt_at <= clock_timestamp() AND (locked_until IS NULL OR locked_until <= clock_timestamp())
    ORDER BY next_attempt_at, occurred_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
RETURNING o.*;

-- name: ExtendNotificationClaim :many
-- Renews the lease of the rows ids that the claim still holds and returns
-- theirs. A row missing from the answer is no longer the claim's: it was
-- finished, deleted with its webhook or environment, or claimed again by
-- another instance after this claim's lease lapsed.
UPDATE notification_outbox
SET locked_until = clock_timestamp() + make_interval(secs => @lease_seconds::float8)
WHERE claim_id = @claim_id::uuid AND id = ANY(@ids::uuid[])
RETURNING id;

-- name: ReleaseNotificationClaim :exec
-- Gives back a claimed row whose send was cut short (shutdown, or the claim
-- could not be renewed), so any instance may claim it at once.
UPDATE notification_outbox
SET locked_until = NULL, claim_id = NULL
WHERE id = @id AND claim_id = @claim_id::uuid;

-- name: DeleteNotification :exec
DELETE FROM notification_outbox WHERE id = @id;

-- name: RetryNotificationAfter :exec
-- Only while the claim still holds the row: after a lapse another instance
-- may hold it, and its lease must stand.
UPDATE notification_outbox
SET next_attempt_at = clock_timestamp() + make_interval(secs => @delay_seconds::float8), locked_until = NULL, claim_id = NULL
WHERE id = @id AND claim_id = @claim_id::uuid;

-- name: GetNotificationContext :one
-- What a payload says about where the change happened.
SELECT e.id AS environment_id, e.name AS environment_name, p.id AS project_id, p.name AS project_name
FROM environments e JOIN projects p ON p.id = e.project_id
WHERE e.id = @environment_id;
