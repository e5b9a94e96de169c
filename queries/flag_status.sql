-- Flag status (docs/reference/measurement.md, Flag status): new, active,
-- launched, inactive.

-- name: ListFlagStatusFlags :many
-- Every flag of the environment, archived ones included, with when its
-- record last changed.
SELECT key, created_at, updated_at FROM flags
WHERE environment_id = @environment_id
ORDER BY key;

-- name: ListLastEvaluations :many
-- The last evaluation of each flag key (impressions and summaries, through
-- the daily rollup).
SELECT flag_key, max(last_seen)::timestamptz AS last_evaluated_at
FROM impression_daily
WHERE environment_id = @environment_id
GROUP BY flag_key;

-- name: ListEvaluationHours :many
-- Evaluations per flag and value in the hours starting at or after from_hour.
SELECT flag_key, value, sum(evaluations)::bigint AS evaluations
FROM evaluation_hours
WHERE environment_id = @environment_id AND hour >= @from_hour
GROUP BY flag_key, value;

-- name: CountRawImpressions :many
-- Impressions per flag and value with since <= evaluated_at < until: the
-- partial hour at the start of the status window.
SELECT i.flag_key, i.value, count(*)::bigint AS evaluations
FROM impressions i
WHERE i.environment_id = @environment_id AND i.evaluated_at >= @since AND i.evaluated_at < @until
GROUP BY i.flag_key, i.value;

-- name: CountRawSummaries :many
-- Summarised evaluations per flag and value with since <= end_at < until.
SELECT s.flag_key, s.value, sum(s.count)::bigint AS evaluations
FROM impression_summaries s
WHERE s.environment_id = @environment_id AND s.end_at >= @since AND s.end_at < @until
GROUP BY s.flag_key, s.value;

-- name: ListTailEvaluations :many
-- The raw rows after the watermarks, which the rollups do not hold yet
-- (server/measure/read.go): per flag and value, the evaluations at or after
-- from_time and the latest evaluation.
WITH tail AS (
    SELECT i.flag_key, i.value, i.evaluated_at AS at, 1::bigint AS n
    FROM impressions i
    WHERE i.environment_id = @environment_id AND i.id > @impressions_after
    UNION ALL
    SELECT s.flag_key, s.value, s.end_at, s.count
    FROM impression_summaries s
    WHERE s.environment_id = @environment_id AND s.id > @summaries_after
)
SELECT tail.flag_key, tail.value,
       sum(CASE WHEN tail.at >= @from_time::timestamptz THEN tail.n ELSE 0 END)::bigint AS evaluations,
       max(tail.at)::timestamptz AS last_at
FROM tail
GROUP BY tail.flag_key, tail.value;
