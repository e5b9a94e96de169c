-- name: CreateSDKKey :one
INSERT INTO sdk_keys (project_id, environment_id, name, key_hash, prefix)
VALUES (@project_id, @environment_id, @name, @key_hash, @prefix)
RETURNING *;
