-- name: GetLatestChangeSeq :one
SELECT coalesce(max(seq), 0)::bigint FROM change_log;

-- name: ListChangesSince :many
SELECT seq, environment_id, kind, key, version FROM change_log
WHERE seq > @after_seq
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
