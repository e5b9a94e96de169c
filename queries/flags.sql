-- name: ListFlags :many
-- archived: NULL lists every flag, true only archived ones, false only active ones.
SELECT * FROM flags
WHERE environment_id = @environment_id
  AND (sqlc.narg(archived)::boolean IS NULL OR (archived_at IS NOT NULL) = sqlc.narg(archived)::boolean)
ORDER BY key;

-- name: GetFlag :one
SELECT * FROM flags WHERE environment_id = @environment_id AND key = @key;

-- name: LockFlag :one
-- Read-modify-write starts here: the row stays locked until the transaction ends.
SELECT * FROM flags WHERE environment_id = @environment_id AND key = @key FOR UPDATE;

-- name: LockFlagTakingTrailID :one
-- LockFlag, and the id of the trail entry the write will record, taken as
-- NextTrailID takes it (the writers' shared lock first): a flag write then
-- spends no round trip of its own on the trail (InsertFlagAuditEntries).
SELECT sqlc.embed(f), w.id::bigint AS trail_id
FROM flags f,
     (SELECT nextval('audit_trail_id_seq') AS id
      FROM (SELECT pg_advisory_xact_lock_shared(8117240063094512301)) AS writer) AS w
WHERE f.environment_id = @environment_id AND f.key = @key
FOR UPDATE OF f;

-- name: InsertFlag :one
-- No row when a concurrent write created the key first (the statement waits
-- for it to commit): the caller then replaces that flag, as POST does for a
-- key that exists.
INSERT INTO flags (environment_id, key, is_enabled, rollout_percentage, description, flag_type,
                   default_value, disabled_value, rules, variants, prerequisites, tags, owner_email, client_side)
VALUES (@environment_id, @key, @is_enabled, @rollout_percentage, @description, @flag_type,
        @default_value, @disabled_value, @rules, @variants, @prerequisites, @tags, @owner_email, @client_side)
ON CONFLICT (environment_id, key) DO NOTHING
RETURNING *;

-- name: UpdateFlag :one
-- Every write bumps the version (docs/reference/flags.md, Version);
-- archived_at is kept.
UPDATE flags
SET is_enabled = @is_enabled, rollout_percentage = @rollout_percentage, description = @description,
    flag_type = @flag_type, default_value = @default_value, disabled_value = @disabled_value,
    rules = @rules, variants = @variants, prerequisites = @prerequisites, tags = @tags,
    owner_email = @owner_email, client_side = @client_side, version = version + 1, updated_at = clock_timestamp()
WHERE id = @id
RETURNING *;

-- name: SetFlagArchivedAt :one
UPDATE flags SET archived_at = @archived_at, version = version + 1, updated_at = clock_timestamp()
WHERE id = @id
RETURNING *;

-- name: DeleteFlag :exec
DELETE FROM flags WHERE id = @id;

-- name: BumpFlagsReferencingSegment :many
-- A segment edit changes what these flags evaluate to, so they get a new
-- version: SDKs ignore updates whose version is not newer than theirs.
UPDATE flags SET version = version + 1, updated_at = clock_timestamp()
WHERE environment_id = @environment_id
  AND rules @> jsonb_build_array(jsonb_build_object('segment_key', @segment_key::text))
RETURNING *;

-- name: ListFlagTypes :many
-- The type of each flag of an environment, for checking prerequisites' required_value.
SELECT key, flag_type FROM flags WHERE environment_id = @environment_id;
