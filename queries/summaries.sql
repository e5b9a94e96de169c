-- Evaluation summaries (docs/reference/measurement.md, Summaries; tables in
-- migrations/00010_summaries_and_status.sql).

-- name: CopySummaries :copyfrom
INSERT INTO impression_summaries (environment_id, flag_key, value, count, start_at, end_at)
VALUES (@environment_id, @flag_key, @value, @count, @start_at, @end_at);

-- name: FoldSummaries :exec
-- Folds the raw summaries with after_id < id <= through_id into the rollups
-- (server/measure/rollups.go). A summary counts at its end.
WITH batch AS (
    SELECT environment_id, flag_key, value, count, end_at AS at
    FROM impression_summaries r
    WHERE r.id > @after_id AND r.id <= @through_id
), daily AS (
    INSERT INTO impression_daily AS d (environment_id, flag_key, day, value, impressions, summarized, last_seen)
    SELECT environment_id, flag_key, (at AT TIME ZONE 'UTC')::date, value, 0, sum(count), max(at)
    FROM batch
    GROUP BY environment_id, flag_key, (at AT TIME ZONE 'UTC')::date, value
    ORDER BY environment_id, flag_key, (at AT TIME ZONE 'UTC')::date, md5(value)
    ON CONFLICT (environment_id, flag_key, day, md5(value)) DO UPDATE
    SET summarized = d.summarized + excluded.summarized,
        last_seen = greatest(d.last_seen, excluded.last_seen)
)
INSERT INTO evaluation_hours AS h (environment_id, flag_key, hour, value, evaluations)
SELECT environment_id, flag_key, date_bin('1 hour', at, timestamptz '2000-01-01 00:00:00+00'), value, sum(count)
FROM batch
GROUP BY 1, 2, 3, value
ORDER BY 1, 2, 3, md5(value)
ON CONFLICT (environment_id, flag_key, hour, md5(value)) DO UPDATE
SET evaluations = h.evaluations + excluded.evaluations;

-- name: DeleteExpiredSummaries :execrows
DELETE FROM impression_summaries
WHERE id IN (SELECT x.id FROM impression_summaries x WHERE x.end_at < @cutoff LIMIT @batch_size);

-- name: DeleteExpiredEvaluationHours :execrows
-- Flag status reads eight days at most.
DELETE FROM evaluation_hours WHERE hour < @cutoff;
