-- name: InsertAuditEntry :exec
INSERT INTO audit_entries (environment_id, flag_key, actor_email, action, before_data, after_data, metadata)
VALUES (@environment_id, @flag_key, @actor_email, @action, @before_data, @after_data, @metadata);

-- name: InsertFlagAuditEntries :exec
-- A flag write's entry in its environment's log (InsertAuditEntry) and in
-- the workspace trail (InsertTrailEntry), in one statement.
WITH logged AS (
    INSERT INTO audit_entries (environment_id, flag_key, actor_email, action, before_data, after_data, metadata)
    VALUES (@environment_id, @flag_key, @actor_email, @action, @before_data, @after_data, @metadata)
)
INSERT INTO audit_trail (id, at, action, actor_kind, actor_email, actor_label, resource_type, resource_id,
                         project_id, environment_id, body, mac)
VALUES (@trail_id, @trail_at, @trail_action, @trail_actor_kind, @trail_actor_email, @trail_actor_label,
        @trail_resource_type, @trail_resource_id, @trail_project_id, @environment_id, @trail_body, @trail_mac);

-- name: ListAuditEntries :many
SELECT * FROM audit_entries
WHERE environment_id = @environment_id
  AND (sqlc.narg(flag_key)::text IS NULL OR flag_key = sqlc.narg(flag_key)::text)
ORDER BY id DESC
LIMIT @row_limit OFFSET @row_offset;
