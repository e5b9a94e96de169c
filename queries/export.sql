-- The raw export of impressions and goal events (server/measure/export.go,
-- docs/export.md): the bounds of a time range's ids, then the rows, a bounded
-- slice of ids at a time in id order.

-- name: GetImpressionExportBounds :one
-- The smallest and largest id, and the number, of the environment's
-- impressions evaluated in [from_at, to_at). The count is what keeps this one
-- pass over the block-range index's pages of the time range (or, for a range
-- that covers most of the table, a sequential scan): min and max alone would
-- be answered by two scans of the primary key that stop at the first row in
-- range, and since time follows id those read most of the table whenever
-- the range is recent or old.
SELECT coalesce(min(id), 0)::bigint AS first_id, coalesce(max(id), 0)::bigint AS last_id, count(*) AS row_count
FROM impressions
WHERE environment_id = @environment_id AND evaluated_at >= @from_at AND evaluated_at < @to_at;

-- name: ListImpressionsForExport :many
-- The environment's impressions evaluated in [from_at, to_at) with
-- after_id < id <= through_id, in id order, at most row_limit: one range
-- scan of the primary key (or of the environment's id index) that reads at
-- most through_id - after_id rows, whatever the time range. context comes as
-- the JSON text PostgreSQL renders (SQL NULL as null), which the export
-- writes as it is: decoding it would only check what jsonb guarantees.
SELECT id, flag_key, user_id, value, coalesce(context, 'null')::text AS context, evaluated_at
FROM impressions
WHERE environment_id = @environment_id
  AND id > @after_id AND id <= @through_id
  AND evaluated_at >= @from_at AND evaluated_at < @to_at
ORDER BY id
LIMIT @row_limit;

-- name: GetGoalEventExportBounds :one
-- GetImpressionExportBounds for goal events, through their block-range
-- index on occurred_at (migrations/00019_goal_events_time_index.sql).
SELECT coalesce(min(id), 0)::bigint AS first_id, coalesce(max(id), 0)::bigint AS last_id, count(*) AS row_count
FROM goal_events
WHERE environment_id = @environment_id AND occurred_at >= @from_at AND occurred_at < @to_at;

-- name: ListGoalEventsForExport :many
-- ListImpressionsForExport for goal events.
SELECT id, event_key, user_id, value, coalesce(context, 'null')::text AS context, occurred_at
FROM goal_events
WHERE environment_id = @environment_id
  AND id > @after_id AND id <= @through_id
  AND occurred_at >= @from_at AND occurred_at < @to_at
ORDER BY id
LIMIT @row_limit;

-- name: GetImpressionIDSpan :one
-- The table's first and last impression by id, with their times: two probes
-- of the primary key. An export whose range covers most of that span walks
-- the whole id range instead of bounding it first (server/measure/export.go).
SELECT f.id AS first_id, f.evaluated_at AS first_at, l.id AS last_id, l.evaluated_at AS last_at
FROM (SELECT i.id, i.evaluated_at FROM impressions i ORDER BY i.id LIMIT 1) f
CROSS JOIN (SELECT i.id, i.evaluated_at FROM impressions i ORDER BY i.id DESC LIMIT 1) l;

-- name: GetGoalEventIDSpan :one
-- GetImpressionIDSpan for goal events.
SELECT f.id AS first_id, f.occurred_at AS first_at, l.id AS last_id, l.occurred_at AS last_at
FROM (SELECT g.id, g.occurred_at FROM goal_events g ORDER BY g.id LIMIT 1) f
CROSS JOIN (SELECT g.id, g.occurred_at FROM goal_events g ORDER BY g.id DESC LIMIT 1) l;
