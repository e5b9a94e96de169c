-- name: CreateEnvironment :one
INSERT INTO environments (project_id, name, slug, color, is_default)
VALUES (@project_id, @name, @slug, @color, @is_default)
RETURNING *;
