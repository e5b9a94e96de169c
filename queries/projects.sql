-- name: CreateProject :one
INSERT INTO projects (name, slug) VALUES (@name, @slug) RETURNING *;

-- name: ListProjects :many
-- Every project, newest first, with its counts (workspace admins).
SELECT p.id, p.name, p.slug, p.created_at,
       (SELECT count(*) FROM environments e WHERE e.project_id = p.id) AS environment_count,
       (SELECT count(*) FROM project_members m WHERE m.project_id = p.id) AS member_count
FROM projects p
ORDER BY p.created_at DESC, p.id;

-- name: ListProjectsByMember :many
-- The projects a user is a member of, newest first, with their counts.
SELECT p.id, p.name, p.slug, p.created_at,
       (SELECT count(*) FROM environments e WHERE e.project_id = p.id) AS environment_count,
       (SELECT count(*) FROM project_members m WHERE m.project_id = p.id) AS member_count
FROM projects p
JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = @user_id
ORDER BY p.created_at DESC, p.id;

-- name: GetProjectWithCounts :one
SELECT p.id, p.name, p.slug, p.created_at,
       (SELECT count(*) FROM environments e WHERE e.project_id = p.id) AS environment_count,
       (SELECT count(*) FROM project_members m WHERE m.project_id = p.id) AS member_count
FROM projects p
WHERE p.id = @id;

-- name: RenameProject :one
UPDATE projects SET name = @name, slug = @slug WHERE id = @id RETURNING *;

-- name: DeleteProject :execrows
DELETE FROM projects WHERE id = @id;

-- name: CountProjects :one
SELECT count(*) FROM projects;

-- name: LockProject :one
-- Serialises the operations that could break a per-project invariant (one
-- environment, one default environment, one SDK key) until the transaction
-- ends: each locks its project first, then counts. NO KEY UPDATE conflicts
-- with itself and with deleting the project, but not with the KEY SHARE locks
-- that inserting a member, environment or SDK key takes on the project, so
-- creations (which only add) never wait for it.
SELECT id FROM projects WHERE id = @id FOR NO KEY UPDATE;

-- name: LockWorkspace :exec
-- Serialises the operations that could break a workspace-wide invariant (one
-- project, one admin) until the transaction ends: each locks the workspace row
-- first, then counts. (Kept here rather than in workspace.sql, which the
-- authentication work owns.)
SELECT id FROM workspace WHERE id = 1 FOR UPDATE;
