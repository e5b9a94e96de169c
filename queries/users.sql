-- name: CountUsers :one
SELECT count(*) FROM users;

-- name: CreateUser :one
INSERT INTO users (name, email, password_hash, role)
VALUES (@name, @email, @password_hash, @role)
RETURNING id, name, email, role, created_at;

-- name: ListUsers :many
-- Newest first; never the password hash.
SELECT id, name, email, role, created_at FROM users ORDER BY created_at DESC, id DESC;

-- name: LockUser :one
SELECT id, name, email, role, created_at FROM users WHERE id = @id FOR UPDATE;

-- name: UpdateUser :one
-- A nil name or role keeps the stored value.
UPDATE users
SET name = coalesce(sqlc.narg(name), name),
    role = coalesce(sqlc.narg(role), role)
WHERE id = @id
RETURNING id, name, email, role, created_at;

-- name: CountWorkspaceAdmins :one
SELECT count(*) FROM users WHERE role = 'admin';

-- name: DeleteUser :exec
-- Cascades to the user's sessions, tokens and project memberships.
DELETE FROM users WHERE id = @id;
