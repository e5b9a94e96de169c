-- name: ListExperiments :many
SELECT * FROM experiments WHERE environment_id = @environment_id ORDER BY created_at DESC, key;

-- name: GetExperiment :one
SELECT * FROM experiments WHERE environment_id = @environment_id AND key = @key;

-- name: LockExperiment :one
SELECT * FROM experiments WHERE environment_id = @environment_id AND key = @key FOR UPDATE;

-- name: InsertExperiment :one
INSERT INTO experiments (environment_id, key, name, description, flag_key, goal_event_key, control_variant)
VALUES (@environment_id, @key, @name, @description, @flag_key, @goal_event_key, @control_variant)
RETURNING *;

-- name: UpdateExperiment :one
UPDATE experiments
SET name = @name, description = @description, goal_event_key = @goal_event_key,
    control_variant = @control_variant, status = @status, updated_at = clock_timestamp()
WHERE id = @id
RETURNING *;

-- name: DeleteExperiment :execrows
DELETE FROM experiments WHERE environment_id = @environment_id AND key = @key;
