-- Impressions: raw rows (COPY at ingest) and the rollups of
-- migrations/00003_measurement.sql, folded in after ingest (rollups.sql).

-- name: CopyImpressions :copyfrom
INSERT INTO impressions (environment_id, flag_key, user_id, value, context, evaluated_at)
VALUES (@environment_id, @flag_key, @user_id, @value, @context, @evaluated_at);

-- name: FoldImpressions :exec
-- Folds the raw rows with after_id < id <= through_id into the rollups
-- (server/measure/rollups.go): one statement per range, which the caller keeps
-- to a bounded width. Rows are upserted in primary-key order. First
-- exposures break ties of time by id (ingest order); rows folded earlier
-- have smaller ids, so an existing row wins a tie.
WITH batch AS (
    SELECT id, environment_id, flag_key, user_id, value, evaluated_at AS at
    FROM impressions r
    WHERE r.id > @after_id AND r.id <= @through_id
), daily AS (
    INSERT INTO impression_daily AS d (environment_id, flag_key, day, value, impressions, last_seen)
    SELECT environment_id, flag_key, (at AT TIME ZONE 'UTC')::date, value, count(*), max(at)
    FROM batch
    GROUP BY environment_id, flag_key, (at AT TIME ZONE 'UTC')::date, value
    ORDER BY environment_id, flag_key, (at AT TIME ZONE 'UTC')::date, md5(value)
    ON CONFLICT (environment_id, flag_key, day, md5(value)) DO UPDATE
    SET impressions = d.impressions + excluded.impressions,
        last_seen = greatest(d.last_seen, excluded.last_seen)
), hours AS (
    INSERT INTO evaluation_hours AS h (environment_id, flag_key, hour, value, evaluations)
    SELECT environment_id, flag_key, date_bin('1 hour', at, timestamptz '2000-01-01 00:00:00+00'), value, count(*)
    FROM batch
    GROUP BY 1, 2, 3, value
    ORDER BY 1, 2, 3, md5(value)
    ON CONFLICT (environment_id, flag_key, hour, md5(value)) DO UPDATE
    SET evaluations = h.evaluations + excluded.evaluations
), variant_users AS (
    INSERT INTO impression_variant_users AS v (environment_id, flag_key, value, user_id, first_at)
    SELECT environment_id, flag_key, value, user_id, min(at)
    FROM batch
    WHERE user_id IS NOT NULL
    GROUP BY environment_id, flag_key, value, user_id
    ORDER BY environment_id, flag_key, md5(value), user_id
    ON CONFLICT (environment_id, flag_key, md5(value), user_id) DO UPDATE
    SET first_at = excluded.first_at
    WHERE excluded.first_at < v.first_at
), exposures AS (
    INSERT INTO impression_exposures AS e (environment_id, flag_key, user_id, value, first_at)
    SELECT DISTINCT ON (environment_id, flag_key, user_id) environment_id, flag_key, user_id, value, at
    FROM batch
    WHERE user_id IS NOT NULL
    ORDER BY environment_id, flag_key, user_id, at, id
    ON CONFLICT (environment_id, flag_key, user_id) DO UPDATE
    SET value = excluded.value, first_at = excluded.first_at
    WHERE excluded.first_at < e.first_at
    -- xmax is 0 exactly for rows this statement inserted (not updated).
    RETURNING e.environment_id, e.flag_key, (e.xmax = 0) AS inserted
)
INSERT INTO impression_flag_users AS f (environment_id, flag_key, users)
SELECT environment_id, flag_key, count(*)
FROM exposures
WHERE inserted
GROUP BY environment_id, flag_key
ORDER BY environment_id, flag_key
ON CONFLICT (environment_id, flag_key) DO UPDATE
SET users = f.users + excluded.users;

-- name: ListImpressions :many
SELECT * FROM impressions
WHERE environment_id = @environment_id
  AND (sqlc.narg(flag_key)::text IS NULL OR flag_key = sqlc.narg(flag_key))
  AND (sqlc.narg(user_id)::text IS NULL OR user_id = sqlc.narg(user_id))
  AND (sqlc.narg(value)::text IS NULL OR value = sqlc.narg(value))
  AND id > @since_id
ORDER BY id DESC
LIMIT @row_limit OFFSET @row_offset;

-- name: CountImpressionsByUser :one
-- The list total when a user_id filter is given: raw rows.
SELECT count(*) FROM impressions
WHERE environment_id = @environment_id
  AND (sqlc.narg(flag_key)::text IS NULL OR flag_key = sqlc.narg(flag_key))
  AND user_id = @user_id
  AND (sqlc.narg(value)::text IS NULL OR value = sqlc.narg(value));

-- name: CountImpressionsFromDaily :one
-- The list total without a user_id filter: the daily rollup holds exactly
-- the raw rows' counts (same transaction at ingest, day-aligned retention);
-- summaries are not impressions and stay out of it.
SELECT coalesce(sum(impressions), 0)::bigint FROM impression_daily
WHERE environment_id = @environment_id
  AND (sqlc.narg(flag_key)::text IS NULL OR flag_key = sqlc.narg(flag_key))
  AND (sqlc.narg(value)::text IS NULL OR value = sqlc.narg(value));

-- name: ListImpressionStats :many
SELECT d.flag_key,
       d.total::bigint AS total,
       d.true_count::bigint AS true_count,
       d.false_count::bigint AS false_count,
       coalesce(u.users, 0)::bigint AS unique_users,
       d.last_seen::timestamptz AS last_seen
FROM (
    -- Summaries count wherever evaluations are counted (extensions.md).
    SELECT flag_key,
           sum(impressions + summarized) AS total,
           coalesce(sum(impressions + summarized) FILTER (WHERE value = 'true'), 0) AS true_count,
           coalesce(sum(impressions + summarized) FILTER (WHERE value = 'false'), 0) AS false_count,
           max(last_seen) AS last_seen
    FROM impression_daily dd
    WHERE dd.environment_id = @environment_id
    GROUP BY dd.flag_key
) d
LEFT JOIN impression_flag_users u ON u.environment_id = @environment_id AND u.flag_key = d.flag_key
ORDER BY d.flag_key;

-- name: ListExposureVariants :many
SELECT d.value,
       d.impressions::bigint AS impressions,
       coalesce(v.users, 0)::bigint AS unique_users
FROM (
    SELECT dd.value, sum(dd.impressions + dd.summarized) AS impressions
    FROM impression_daily dd
    WHERE dd.environment_id = @environment_id AND dd.flag_key = @flag_key
    GROUP BY dd.value
) d
LEFT JOIN (
    SELECT vu.value, count(*) AS users
    FROM impression_variant_users vu
    WHERE vu.environment_id = @environment_id AND vu.flag_key = @flag_key
    GROUP BY vu.value
) v ON v.value = d.value
ORDER BY d.value;

-- name: ListExposureTimeline :many
SELECT day, value, (impressions + summarized)::bigint AS impressions FROM impression_daily
WHERE environment_id = @environment_id AND flag_key = @flag_key AND day >= @first_day
ORDER BY day, value;

-- name: GetFlagUsers :one
SELECT coalesce((SELECT users FROM impression_flag_users
                 WHERE environment_id = @environment_id AND flag_key = @flag_key), 0)::bigint;

-- name: ListExperimentArms :many
-- Per variant of first exposure: users exposed, and users whose latest goal
-- event of the key occurred at or after their first exposure.
SELECT e.value AS variant,
       count(*)::bigint AS exposed,
       count(*) FILTER (WHERE g.last_at >= e.first_at)::bigint AS converted
FROM impression_exposures e
LEFT JOIN goal_event_users g
    ON g.environment_id = e.environment_id AND g.event_key = @goal_event_key AND g.user_id = e.user_id
WHERE e.environment_id = @environment_id AND e.flag_key = @flag_key
GROUP BY e.value
ORDER BY e.value;

-- name: DeleteExpiredImpressions :execrows
DELETE FROM impressions
WHERE id IN (SELECT x.id FROM impressions x WHERE x.evaluated_at < @cutoff LIMIT @batch_size);

-- name: DeleteExpiredImpressionDays :execrows
DELETE FROM impression_daily WHERE day < @cutoff_day;

-- name: RefreshExpiredExposures :one
-- A batch of first exposures older than the cutoff: each becomes the user's
-- earliest remaining impression of the flag, or disappears (with the flag's
-- user counter) when none remains.
WITH stale AS (
    SELECT x.environment_id, x.flag_key, x.user_id FROM impression_exposures x
    WHERE x.first_at < @cutoff
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED
), fresh AS (
    SELECT s.environment_id, s.flag_key, s.user_id, f.value, f.evaluated_at
    FROM stale s
    LEFT JOIN LATERAL (
        SELECT i.value, i.evaluated_at FROM impressions i
        WHERE i.environment_id = s.environment_id AND i.flag_key = s.flag_key
          AND i.user_id = s.user_id AND i.evaluated_at >= @cutoff
        ORDER BY i.evaluated_at, i.id
        LIMIT 1
    ) f ON true
), updated AS (
    UPDATE impression_exposures e SET value = f.value, first_at = f.evaluated_at
    FROM fresh f
    WHERE f.evaluated_at IS NOT NULL AND e.environment_id = f.environment_id
      AND e.flag_key = f.flag_key AND e.user_id = f.user_id
), deleted AS (
    DELETE FROM impression_exposures e
    USING fresh f
    WHERE f.evaluated_at IS NULL AND e.environment_id = f.environment_id
      AND e.flag_key = f.flag_key AND e.user_id = f.user_id
    RETURNING e.environment_id, e.flag_key
), counted AS (
    UPDATE impression_flag_users u SET users = u.users - c.n
    FROM (SELECT environment_id, flag_key, count(*) AS n FROM deleted GROUP BY environment_id, flag_key) c
    WHERE u.environment_id = c.environment_id AND u.flag_key = c.flag_key
)
SELECT count(*) FROM stale;

-- name: RefreshExpiredVariantUsers :one
-- Like RefreshExpiredExposures, per flag, value and user.
WITH stale AS (
    SELECT x.environment_id, x.flag_key, x.value, x.user_id FROM impression_variant_users x
    WHERE x.first_at < @cutoff
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED
), fresh AS (
    SELECT s.environment_id, s.flag_key, s.value, s.user_id,
           (SELECT min(i.evaluated_at) FROM impressions i
            WHERE i.environment_id = s.environment_id AND i.flag_key = s.flag_key
              AND i.user_id = s.user_id AND i.value = s.value AND i.evaluated_at >= @cutoff) AS first_at
    FROM stale s
), updated AS (
    UPDATE impression_variant_users v SET first_at = f.first_at
    FROM fresh f
    WHERE f.first_at IS NOT NULL AND v.environment_id = f.environment_id AND v.flag_key = f.flag_key
      AND md5(v.value) = md5(f.value) AND v.value = f.value AND v.user_id = f.user_id
), deleted AS (
    DELETE FROM impression_variant_users v
    USING fresh f
    WHERE f.first_at IS NULL AND v.environment_id = f.environment_id AND v.flag_key = f.flag_key
      AND md5(v.value) = md5(f.value) AND v.value = f.value AND v.user_id = f.user_id
)
SELECT count(*) FROM stale;

-- name: DeleteEmptyFlagUsers :execrows
DELETE FROM impression_flag_users WHERE users <= 0;
