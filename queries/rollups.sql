-- Folding raw impressions and goal events into the rollups
-- (migrations/00006_rollup_watermarks.sql, server/measure/rollups.go).

-- name: LockIngestShared :exec
-- Held by every ingest transaction from before its COPY until it commits.
SELECT pg_advisory_xact_lock_shared(7313092251183417002);

-- name: LockIngestExclusive :exec
-- The fold's barrier: granted once every ingest in flight has committed.
SELECT pg_advisory_xact_lock(7313092251183417002);

-- name: GetIngestHighWater :one
-- The largest committed ids. Read after LockIngestExclusive, in a later
-- statement (a new snapshot), every ingest with a smaller id has committed.
SELECT (SELECT coalesce(max(id), 0) FROM impressions)::bigint AS impressions,
       (SELECT coalesce(max(id), 0) FROM goal_events)::bigint AS events,
       (SELECT coalesce(max(id), 0) FROM impression_summaries)::bigint AS summaries;

-- name: GetRollupWatermarks :one
SELECT (SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions')::bigint AS impressions,
       (SELECT folded_through FROM rollup_watermarks WHERE kind = 'events')::bigint AS events,
       (SELECT folded_through FROM rollup_watermarks WHERE kind = 'summaries')::bigint AS summaries;

-- name: LockRollupWatermark :one
-- Serialises folding of one kind (and the reads that fold first) across
-- instances.
SELECT folded_through FROM rollup_watermarks WHERE kind = @kind FOR UPDATE;

-- name: SetRollupWatermark :exec
UPDATE rollup_watermarks SET folded_through = @folded_through WHERE kind = @kind;

-- name: LockEnvironmentForIngest :one
-- Once per ingest batch, in its transaction: the raw tables have no foreign
-- key (migrations/00011_raw_rows_without_foreign_keys.sql), so this refuses a
-- deleted environment and holds off a deletion until the batch commits (whose
-- trigger then clears it).
SELECT id FROM environments WHERE id = @environment_id FOR KEY SHARE;

-- name: SetMeasurementReadSettings :exec
-- For the rest of a measurement read's transaction (server/measure/read.go):
-- no JIT compilation, which costs tens of milliseconds per statement (more
-- under load) and saves these bounded reads less, and room to sort and hash
-- a flag's users in memory (experiment results).
SELECT set_config('jit', 'off', true), set_config('work_mem', '32MB', true);

-- name: RefreshMeasurementStatistics :many
-- ANALYZE the measurement tables that grew past autovacuum's default
-- threshold since their statistics were last gathered, one instance at a
-- time (migrations/00022_measurement_statistics.sql), and name them.
SELECT t::text AS analyzed FROM measurement_refresh_statistics() AS t;
