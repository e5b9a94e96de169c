-- name: InsertScheduledChange :one
INSERT INTO scheduled_changes (environment_id, flag_key, scheduled_at, patch, next_attempt_at, created_by)
VALUES (@environment_id, @flag_key, @scheduled_at, @patch, @scheduled_at, @created_by)
RETURNING *;

-- name: ListScheduledChanges :many
-- Executed changes stay listed (docs/reference/flags.md, Scheduled changes).
-- flag_key NULL lists every flag.
SELECT * FROM scheduled_changes
WHERE environment_id = @environment_id
  AND (sqlc.narg(flag_key)::text IS NULL OR flag_key = sqlc.narg(flag_key)::text)
ORDER BY scheduled_at, created_at, id;

-- name: DeletePendingScheduledChange :one
DELETE FROM scheduled_changes
WHERE environment_id = @environment_id AND id = @id AND executed_at IS NULL
RETURNING *;

-- name: ClaimDueScheduledChange :one
-- One due change whose environment permits it (docs/reference/flags.md,
-- Scheduled changes: while approval is required the change waits). SKIP LOCKED lets several instances work the
-- queue at once, each change claimed by exactly one of them.
SELECT sc.* FROM scheduled_changes sc
JOIN environments e ON e.id = sc.environment_id
WHERE sc.executed_at IS NULL AND sc.next_attempt_at <= @now AND NOT e.require_approval
ORDER BY sc.next_attempt_at, sc.id
LIMIT 1
FOR UPDATE OF sc SKIP LOCKED;

-- name: MarkScheduledChangeExecuted :one
UPDATE scheduled_changes
SET executed_at = @executed_at, attempts = attempts + 1, last_error = NULL
WHERE id = @id
RETURNING *;

-- name: MarkScheduledChangeFailed :one
UPDATE scheduled_changes
SET attempts = attempts + 1, last_error = @last_error, next_attempt_at = @next_attempt_at
WHERE id = @id
RETURNING *;
