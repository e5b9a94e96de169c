-- name: InsertAuditEntry :exec
INSERT INTO audit_entries (environment_id, flag_key, actor_email, action, before_data, after_data, metadata)
VALUES (@environment_id, @flag_key, @actor_email, @action, @before_data, @after_data, @metadata);

-- name: ListAuditEntries :many
SELECT * FROM audit_entries
WHERE environment_id = @environment_id
  AND (sqlc.narg(flag_key)::text IS NULL OR flag_key = sqlc.narg(flag_key)::text)
ORDER BY id DESC
LIMIT @row_limit OFFSET @row_offset;
