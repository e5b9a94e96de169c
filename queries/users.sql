-- name: CountUsers :one
SELECT count(*) FROM users;

-- name: CreateUser :one
INSERT INTO users (name, email, password_hash, role)
VALUES (@name, @email, @password_hash, @role)
RETURNING id, name, email, role, created_at;
