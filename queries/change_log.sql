-- name: GetChangeLogSnapshot :one
-- The snapshot of the statement (of the transaction, under REPEATABLE
-- READ): a change-log position that is exact whatever order ids commit in.
SELECT pg_current_snapshot()::text AS snapshot;

-- name: ListChangesVisibleSince :many
-- The entries of every transaction that @since did not see and this
-- transaction's snapshot does: what committed in between, exactly. Pages
-- by seq within one REPEATABLE READ transaction.
SELECT seq, environment_id, kind, key, version FROM change_log
WHERE xid >= pg_snapshot_xmin(CAST(sqlc.arg(since)::text AS pg_snapshot))
  AND NOT pg_visible_in_snapshot(xid, CAST(sqlc.arg(since)::text AS pg_snapshot))
  AND seq > @after_seq
ORDER BY seq
LIMIT @row_limit;

-- name: PruneChangeLog :execrows
-- The log only bridges delivery gaps; an hour covers any outage an instance
-- survives without a resync.
DELETE FROM change_log WHERE created_at < @before;

-- name: ListReadableEnvironmentIDs :many
-- The environments a user may read: every one for a workspace admin,
-- otherwise those of their member projects.
SELECT e.id FROM environments e
WHERE @is_workspace_admin::boolean
   OR e.project_id IN (SELECT project_id FROM project_members WHERE user_id = @user_id)
ORDER BY e.created_at;

-- name: ListRevocationsInTransaction :many
-- The credentials the current transaction has ended, through whatever
-- deletion or cascade (migrations/00007_credential_log.sql). A transaction
-- that wrote nothing has no xid yet, and the comparison with NULL finds no
-- row without assigning one.
SELECT environment_id, key FROM change_log
WHERE kind = 'revoke' AND xid = pg_current_xact_id_if_assigned();
