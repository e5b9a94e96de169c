-- The workspace audit trail (migrations/00020_audit_trail.sql).

-- name: NextTrailID :one
-- The shared lock is taken before the id and held to the end of the
-- writer's transaction: the sealer waits for its holders (ListTrailWriters)
-- before it seals up to an id it has read.
SELECT nextval('audit_trail_id_seq')::bigint AS id
FROM (SELECT pg_advisory_xact_lock_shared(8117240063094512301)) AS writer;

-- name: InsertTrailEntry :exec
INSERT INTO audit_trail (id, at, action, actor_kind, actor_email, actor_label, resource_type, resource_id,
                         project_id, environment_id, body, mac)
VALUES (@id, @at, @action, @actor_kind, @actor_email, @actor_label, @resource_type, @resource_id,
        @project_id, @environment_id, @body, @mac);

-- name: LockTrailSealer :one
-- One instance seals at a time; the others skip their turn.
SELECT pg_try_advisory_xact_lock(8117240063094512302) AS locked;

-- name: LastTrailID :one
-- The last id handed out by any transaction, committed or not (sequences
-- are not transactional).
SELECT audit_trail_last_id()::bigint AS id;

-- name: ListTrailWriters :many
-- The transactions that hold the writers' lock now (NextTrailID).
SELECT vxid::text FROM audit_trail_writers() AS vxid;

-- name: GetTrailHead :one
-- The sealed entry the next seal continues from; id 0 and no hash before
-- the first seal.
SELECT h.id, h.hash FROM (
    (SELECT t.id, t.hash FROM audit_trail_head t)
    UNION ALL
    (SELECT 0::bigint, '\x'::bytea)
) h ORDER BY h.id DESC LIMIT 1;

-- name: SetTrailHead :exec
INSERT INTO audit_trail_head (id, hash) VALUES (@id, @hash)
ON CONFLICT (singleton) DO UPDATE SET id = excluded.id, hash = excluded.hash;

-- name: ListTrailUnsealed :many
-- Every entry past the head is unsealed: the sealer never skips one.
SELECT id, body FROM audit_trail
WHERE id > @after_id AND id <= @through_id
ORDER BY id
LIMIT @row_limit;

-- name: SealTrailEntries :exec
INSERT INTO audit_trail_hashes (id, hash)
SELECT unnest(@ids::bigint[]), unnest(@hashes::bytea[]);

-- name: ListTrailEntries :many
-- Newest first by (at, id), from the cursor (exclusive). Run with
-- plan_cache_mode force_custom_plan, so that each absent filter folds away
-- and the plan reads along the one index the given filter has.
SELECT t.id, t.at, t.body, (SELECT h.hash FROM audit_trail_hashes h WHERE h.id = t.id)::bytea AS hash
FROM audit_trail t
WHERE (NOT @paged::boolean OR (t.at, t.id) < (@cursor_at::timestamptz, @cursor_id::bigint))
  AND (NOT @restricted::boolean OR t.project_id = ANY(@project_ids::uuid[]))
  AND (sqlc.narg(project_id)::uuid IS NULL OR t.project_id = sqlc.narg(project_id)::uuid)
  AND (sqlc.narg(environment_id)::uuid IS NULL OR t.environment_id = sqlc.narg(environment_id)::uuid)
  AND (sqlc.narg(actor_email)::text IS NULL OR t.actor_email = sqlc.narg(actor_email)::text)
  AND (sqlc.narg(actor_label)::text IS NULL OR t.actor_label = sqlc.narg(actor_label)::text)
  AND (sqlc.narg(resource_type)::text IS NULL OR t.resource_type = sqlc.narg(resource_type)::text)
  AND (sqlc.narg(resource_id)::text IS NULL OR t.resource_id = sqlc.narg(resource_id)::text)
  AND (sqlc.narg(action)::text IS NULL OR t.action = sqlc.narg(action)::text)
  AND (sqlc.narg(action_prefix)::text IS NULL OR t.action LIKE sqlc.narg(action_prefix)::text || '%')
  AND (sqlc.narg(from_at)::timestamptz IS NULL OR t.at >= sqlc.narg(from_at)::timestamptz)
  AND (sqlc.narg(to_at)::timestamptz IS NULL OR t.at < sqlc.narg(to_at)::timestamptz)
ORDER BY t.at DESC, t.id DESC
LIMIT @row_limit;

-- name: ListTrailEntriesAscending :many
-- The export's and verification's walk: oldest first from after_id
-- (exclusive), with the same filters as ListTrailEntries.
SELECT t.id, t.body, h.hash
FROM audit_trail t LEFT JOIN audit_trail_hashes h ON h.id = t.id AND h.id > @after_id
WHERE t.id > @after_id
  AND (NOT @restricted::boolean OR t.project_id = ANY(@project_ids::uuid[]))
  AND (sqlc.narg(project_id)::uuid IS NULL OR t.project_id = sqlc.narg(project_id)::uuid)
  AND (sqlc.narg(environment_id)::uuid IS NULL OR t.environment_id = sqlc.narg(environment_id)::uuid)
  AND (sqlc.narg(actor_email)::text IS NULL OR t.actor_email = sqlc.narg(actor_email)::text)
  AND (sqlc.narg(actor_label)::text IS NULL OR t.actor_label = sqlc.narg(actor_label)::text)
  AND (sqlc.narg(resource_type)::text IS NULL OR t.resource_type = sqlc.narg(resource_type)::text)
  AND (sqlc.narg(resource_id)::text IS NULL OR t.resource_id = sqlc.narg(resource_id)::text)
  AND (sqlc.narg(action)::text IS NULL OR t.action = sqlc.narg(action)::text)
  AND (sqlc.narg(action_prefix)::text IS NULL OR t.action LIKE sqlc.narg(action_prefix)::text || '%')
  AND (sqlc.narg(from_at)::timestamptz IS NULL OR t.at >= sqlc.narg(from_at)::timestamptz)
  AND (sqlc.narg(to_at)::timestamptz IS NULL OR t.at < sqlc.narg(to_at)::timestamptz)
ORDER BY t.id
LIMIT @row_limit;

-- name: ListTrailForVerify :many
-- Every row from after_id on, whatever its columns say: verification
-- checks each row's copy of the body's fields too.
SELECT t.id, t.at, t.action, t.actor_kind, t.actor_email, t.actor_label, t.resource_type, t.resource_id,
       t.project_id, t.environment_id, t.body, t.mac, h.hash
-- The hashes' range bound too, so that the plan merges two index ranges.
FROM audit_trail t LEFT JOIN audit_trail_hashes h
    ON h.id = t.id AND h.id > @after_id AND (sqlc.narg(through_id)::bigint IS NULL OR h.id <= sqlc.narg(through_id)::bigint)
WHERE t.id > @after_id AND (sqlc.narg(through_id)::bigint IS NULL OR t.id <= sqlc.narg(through_id)::bigint)
ORDER BY t.id
LIMIT @row_limit;

-- name: GetTrailHashBefore :one
-- The hash the entry after before_id chains from: the stored hash of the
-- row just before it, else the retention anchor's, else none.
SELECT h.hash FROM (
    (SELECT t.id, h.hash FROM audit_trail t LEFT JOIN audit_trail_hashes h ON h.id = t.id
     WHERE t.id < @before_id ORDER BY t.id DESC LIMIT 1)
    UNION ALL
    (SELECT a.id, a.hash FROM audit_trail_anchor a WHERE a.id < @before_id)
    UNION ALL
    (SELECT 0::bigint, '\x'::bytea)
) h ORDER BY h.id DESC LIMIT 1;

-- name: GetTrailIDRange :one
-- The ids of the first and last entry in [from_at, to_at).
SELECT coalesce(min(id), 0)::bigint AS first_id, coalesce(max(id), 0)::bigint AS last_id FROM audit_trail
WHERE (sqlc.narg(from_at)::timestamptz IS NULL OR at >= sqlc.narg(from_at)::timestamptz)
  AND (sqlc.narg(to_at)::timestamptz IS NULL OR at < sqlc.narg(to_at)::timestamptz);

-- name: ListAdminProjectIDs :many
SELECT project_id FROM project_members WHERE user_id = @user_id AND role = 'admin';

-- name: GetTrailRetentionCut :one
-- The last sealed entry older than the cutoff that retention may remove with
-- everything before it: a prefix of the chain, never a gap in it.
SELECT coalesce(max(t.id), 0)::bigint AS id FROM audit_trail t
WHERE t.at < @cutoff AND t.id <= (SELECT h.id FROM audit_trail_head h);

-- name: SetTrailAnchor :exec
INSERT INTO audit_trail_anchor (id, hash)
SELECT h.id, h.hash FROM audit_trail_hashes h WHERE h.id = @id
ON CONFLICT (singleton) DO UPDATE SET id = excluded.id, hash = excluded.hash;

-- name: DeleteTrailThrough :execrows
DELETE FROM audit_trail WHERE id <= @id;

-- name: DeleteTrailHashesThrough :exec
DELETE FROM audit_trail_hashes WHERE id <= @id;

-- name: AllowTrailRetention :exec
SELECT set_config('switchyard.audit_retention', 'on', true);

-- name: PlanTrailReadsCustom :exec
-- The trail's filtered reads plan for the filters given, not generically.
SELECT set_config('plan_cache_mode', 'force_custom_plan', true);

-- name: GetTrailEnvironmentProject :one
-- The project of an environment an entry names (environments never move).
SELECT project_id FROM environments WHERE id = @id;
