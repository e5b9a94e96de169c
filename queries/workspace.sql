-- name: GetWorkspace :one
SELECT * FROM workspace WHERE id = 1;

-- name: CreateWorkspace :one
INSERT INTO workspace (id, name) VALUES (1, @name) RETURNING *;

-- name: GetWorkspaceInfo :one
-- Setup is complete exactly when at least one user exists
-- (docs/reference/identity.md, Setup wizard).
SELECT w.name, EXISTS (SELECT 1 FROM users) AS setup_complete
FROM workspace w
WHERE w.id = 1;

-- name: LockWorkspaceSetup :exec
-- Serialises first-boot seeding and first-admin creation across instances until
-- the transaction ends. The key is arbitrary but must stay the same everywhere.
SELECT pg_advisory_xact_lock(5823419175601839003);
