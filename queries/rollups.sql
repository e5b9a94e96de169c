-- name: InsertPendingRollup :exec
INSERT INTO rollup_pending (kind, params) VALUES (@kind, @params);

-- name: LockRollupFold :exec
-- Serialises folding (and the reads that fold first) across instances.
SELECT pg_advisory_xact_lock(7313092251183417001);

-- name: TryLockRollupFold :one
SELECT pg_try_advisory_xact_lock(7313092251183417001);

-- name: ListPendingRollups :many
SELECT id, kind, params FROM rollup_pending ORDER BY id LIMIT @row_limit;

-- name: DeletePendingRollups :exec
DELETE FROM rollup_pending WHERE id = ANY(@ids::bigint[]);

-- name: CountPendingRollups :one
SELECT count(*) FROM rollup_pending;
