-- name: InsertChangeRequest :one
INSERT INTO change_requests (environment_id, flag_key, patch, requested_by, requested_by_user_id)
VALUES (@environment_id, @flag_key, @patch, @requested_by, @requested_by_user_id)
RETURNING *;
