-- name: CreateToken :one
INSERT INTO personal_access_tokens (user_id, name, token_hash, prefix, scope, expires_at)
VALUES (@user_id, @name, @token_hash, @prefix, @scope, @expires_at)
RETURNING *;

-- name: ListTokensByUser :many
-- The user's own tokens, newest first.
SELECT * FROM personal_access_tokens WHERE user_id = @user_id ORDER BY created_at DESC, id DESC;

-- name: DeleteToken :one
-- Only the owner's: another user's token id deletes nothing (no row).
DELETE FROM personal_access_tokens WHERE id = @id AND user_id = @user_id
RETURNING *;
