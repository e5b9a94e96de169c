-- name: CreateSDKKey :one
INSERT INTO sdk_keys (project_id, environment_id, name, kind, key_hash, prefix)
VALUES (@project_id, @environment_id, @name, @kind, @key_hash, @prefix)
RETURNING *;

-- name: ListSDKKeysByProject :many
-- Newest first, with the environment's name; never the hash.
SELECT k.id, k.name, k.kind, k.prefix, k.environment_id, e.name AS environment_name, k.created_at
FROM sdk_keys k
JOIN environments e ON e.id = k.environment_id
WHERE k.project_id = @project_id
ORDER BY k.created_at DESC, k.id DESC;

-- name: GetSDKKeyInProject :one
-- A key as the list shows it (never the hash).
SELECT k.id, k.name, k.kind, k.prefix, k.environment_id, e.name AS environment_name, k.created_at
FROM sdk_keys k
JOIN environments e ON e.id = k.environment_id
WHERE k.id = @id AND k.project_id = @project_id;

-- name: CountServerKeysByProject :one
-- A project keeps at least one server SDK key; client keys do not count
-- (docs/reference/identity.md, SDK key management).
SELECT count(*) FROM sdk_keys WHERE project_id = @project_id AND kind = 'server';

-- name: CountServerKeysOutsideEnvironment :one
-- The server keys of a project that would survive deleting one of its
-- environments.
SELECT count(*) FROM sdk_keys WHERE project_id = @project_id AND environment_id <> @environment_id AND kind = 'server';

-- name: DeleteSDKKey :exec
DELETE FROM sdk_keys WHERE id = @id AND project_id = @project_id;
