-- name: CreateProject :one
INSERT INTO projects (name, slug) VALUES (@name, @slug) RETURNING *;
