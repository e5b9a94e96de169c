-- name: ListSegments :many
SELECT * FROM segments WHERE environment_id = @environment_id ORDER BY key;

-- name: GetSegment :one
SELECT * FROM segments WHERE environment_id = @environment_id AND key = @key;

-- name: LockSegment :one
SELECT * FROM segments WHERE environment_id = @environment_id AND key = @key FOR UPDATE;

-- name: InsertSegment :one
INSERT INTO segments (environment_id, key, name, description, rules)
VALUES (@environment_id, @key, @name, @description, @rules)
RETURNING *;

-- name: UpdateSegment :one
UPDATE segments SET name = @name, description = @description, rules = @rules, updated_at = clock_timestamp()
WHERE id = @id
RETURNING *;

-- name: DeleteSegment :exec
DELETE FROM segments WHERE id = @id;
