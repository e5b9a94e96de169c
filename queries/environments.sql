-- name: CreateEnvironment :one
INSERT INTO environments (project_id, name, slug, color, is_default)
VALUES (@project_id, @name, @slug, @color, @is_default)
RETURNING *;

-- name: ListEnvironmentsByProject :many
-- Newest first (docs/reference/flags.md, List order).
SELECT * FROM environments WHERE project_id = @project_id ORDER BY created_at DESC, id;

-- name: ListEnvironmentsByProjects :many
-- Environments of several projects for their summaries: default first, then newest first.
SELECT * FROM environments
WHERE project_id = ANY(@project_ids::uuid[])
ORDER BY project_id, is_default DESC, created_at DESC, id;

-- name: GetEnvironmentInProject :one
SELECT * FROM environments WHERE id = @id AND project_id = @project_id;

-- name: LockEnvironmentInProject :one
-- An environment's settings as they are before a change, locked until the
-- transaction ends, so that the change's audit entry shows what it replaced.
SELECT * FROM environments WHERE id = @id AND project_id = @project_id FOR NO KEY UPDATE;

-- name: UpdateEnvironment :one
-- A nil name or color keeps the stored value.
UPDATE environments
SET name = coalesce(sqlc.narg(name), name),
    color = coalesce(sqlc.narg(color), color)
WHERE id = @id AND project_id = @project_id
RETURNING *;

-- name: SetEnvironmentRequireApproval :one
UPDATE environments SET require_approval = @require_approval
WHERE id = @id AND project_id = @project_id
RETURNING *;

-- name: ClearDefaultEnvironment :many
-- The first half of moving the default: the partial unique index
-- environments_one_default_key allows at most one default per project. It
-- returns the environment that was the default, as it is now.
UPDATE environments SET is_default = false WHERE project_id = @project_id AND is_default
RETURNING *;

-- name: SetDefaultEnvironment :one
UPDATE environments SET is_default = true
WHERE id = @id AND project_id = @project_id
RETURNING *;

-- name: CountEnvironmentsByProject :one
SELECT count(*) FROM environments WHERE project_id = @project_id;

-- name: DeleteEnvironment :exec
DELETE FROM environments WHERE id = @id AND project_id = @project_id;
