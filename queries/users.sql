-- name: CountUsers :one
SELECT count(*) FROM users;

-- name: CreateUser :one
INSERT INTO users (name, email, password_hash, role)
VALUES (@name, @email, @password_hash, @role)
RETURNING id, name, email, role, active, sso_linked, created_at;

-- name: ListUsers :many
-- Newest first; never the password hash.
SELECT id, name, email, role, active, sso_linked, created_at FROM users ORDER BY created_at DESC, id DESC;

-- name: LockUser :one
SELECT id, name, email, role, active, sso_linked, created_at FROM users WHERE id = @id FOR UPDATE;

-- name: UpdateUser :one
-- A nil name, role or active keeps the stored value.
UPDATE users
SET name = coalesce(sqlc.narg(name), name),
    role = coalesce(sqlc.narg(role), role),
    active = coalesce(sqlc.narg(active), active)
WHERE id = @id
RETURNING id, name, email, role, active, sso_linked, created_at;

-- name: CountWorkspaceAdmins :one
-- Only active admins count: a deactivated admin cannot administer anything.
SELECT count(*) FROM users WHERE role = 'admin' AND active;

-- name: DeleteSessionsByUser :exec
-- Deactivation ends every session of the user; the sessions trigger records
-- each one in the change log.
DELETE FROM sessions WHERE user_id = @user_id;

-- name: DeleteUser :exec
-- Cascades to the user's sessions, tokens and project memberships.
DELETE FROM users WHERE id = @id;
