-- name: InsertChangeRequest :one
INSERT INTO change_requests (environment_id, flag_key, patch, requested_by, requested_by_user_id)
VALUES (@environment_id, @flag_key, @patch, @requested_by, @requested_by_user_id)
RETURNING *;

-- name: ListChangeRequests :many
-- Newest first; status NULL lists every status.
SELECT * FROM change_requests
WHERE environment_id = @environment_id
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status)::text)
ORDER BY id DESC;

-- name: LockChangeRequest :one
-- Reviews lock the request first, so two reviewers clicking at once
-- serialise and the second sees it no longer pending.
SELECT * FROM change_requests WHERE environment_id = @environment_id AND id = @id FOR UPDATE;

-- name: SetChangeRequestStatus :one
UPDATE change_requests
SET status = @status, reviewed_by = @reviewed_by, reviewed_at = @reviewed_at, reason = @reason
WHERE id = @id
RETURNING *;
