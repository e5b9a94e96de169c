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
    -- No probe before the upsert (as goal events have): a reporter that
    -- dedups (the Go SDK) sends only triples new to it, which are almost
    -- always new to the rollup too, and the upsert probes once anyway.
    INSERT INTO impression_variant_users AS v (environment_id, flag_key, value, user_id, first_at)
    SELECT environment_id, flag_key, value, user_id, min(at)
    FROM batch
    WHERE user_id IS NOT NULL
    GROUP BY environment_id, flag_key, value, user_id
    ORDER BY environment_id, flag_key, md5(value), user_id
    ON CONFLICT (environment_id, flag_key, md5(value), user_id) DO UPDATE
    SET first_at = excluded.first_at
    WHERE excluded.first_at < v.first_at
    -- xmax is 0 exactly for rows this statement inserted (not updated).
    RETURNING v.environment_id, v.flag_key, v.value, (v.xmax = 0) AS inserted
), value_users AS (
    INSERT INTO impression_value_users AS c (environment_id, flag_key, value, users)
    SELECT vu.environment_id, vu.flag_key, vu.value, count(*)
    FROM variant_users vu
    WHERE vu.inserted
    GROUP BY vu.environment_id, vu.flag_key, vu.value
    ORDER BY vu.environment_id, vu.flag_key, md5(vu.value)
    ON CONFLICT (environment_id, flag_key, md5(value)) DO UPDATE
    SET users = c.users + excluded.users
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
-- the raw rows' counts through the watermark (day-aligned retention keeps
-- it so), and the rows after it are counted raw (read.go). Summaries are
-- not impressions and stay out of it.
SELECT (coalesce((
    SELECT sum(d.impressions) FROM impression_daily d
    WHERE d.environment_id = @environment_id
      AND (sqlc.narg(flag_key)::text IS NULL OR d.flag_key = sqlc.narg(flag_key))
      AND (sqlc.narg(value)::text IS NULL OR d.value = sqlc.narg(value))
), 0) + (
    SELECT count(*) FROM impressions i
    WHERE i.environment_id = @environment_id AND i.id > @impressions_after
      AND (sqlc.narg(flag_key)::text IS NULL OR i.flag_key = sqlc.narg(flag_key))
      AND (sqlc.narg(value)::text IS NULL OR i.value = sqlc.narg(value))
))::bigint;

-- name: ListImpressionStats :many
-- The rollups through the watermarks plus the raw rows after them, which
-- the folder has not reached yet (server/measure/read.go). Summaries count
-- wherever evaluations are counted (docs/reference/measurement.md, Summaries).
WITH tail AS (
    SELECT i.flag_key, i.user_id, i.value, i.evaluated_at
    FROM impressions i
    WHERE i.environment_id = @environment_id AND i.id > @impressions_after
), evaluations AS (
    SELECT dd.flag_key, dd.value, (dd.impressions + dd.summarized) AS n, dd.last_seen
    FROM impression_daily dd
    WHERE dd.environment_id = @environment_id
    UNION ALL
    SELECT t.flag_key, t.value, count(*), max(t.evaluated_at)
    FROM tail t
    GROUP BY t.flag_key, t.value
    UNION ALL
    SELECT s.flag_key, s.value, sum(s.count)::bigint, max(s.end_at)
    FROM impression_summaries s
    WHERE s.environment_id = @environment_id AND s.id > @summaries_after
    GROUP BY s.flag_key, s.value
), d AS (
    SELECT e.flag_key,
           sum(e.n) AS total,
           coalesce(sum(e.n) FILTER (WHERE e.value = 'true'), 0) AS true_count,
           coalesce(sum(e.n) FILTER (WHERE e.value = 'false'), 0) AS false_count,
           max(e.last_seen) AS last_seen
    FROM evaluations e
    GROUP BY e.flag_key
), new_users AS (
    SELECT t.flag_key, count(DISTINCT t.user_id) AS users
    FROM tail t
    WHERE t.user_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM impression_exposures x
        WHERE x.environment_id = @environment_id AND x.flag_key = t.flag_key AND x.user_id = t.user_id)
    GROUP BY t.flag_key
)
SELECT d.flag_key,
       d.total::bigint AS total,
       d.true_count::bigint AS true_count,
       d.false_count::bigint AS false_count,
       (coalesce(u.users, 0) + coalesce(nu.users, 0))::bigint AS unique_users,
       d.last_seen::timestamptz AS last_seen
FROM d
LEFT JOIN impression_flag_users u ON u.environment_id = @environment_id AND u.flag_key = d.flag_key
LEFT JOIN new_users nu ON nu.flag_key = d.flag_key
ORDER BY d.flag_key;

-- name: ListExposureVariants :many
-- Rollups through the watermarks plus the raw rows after them (read.go).
WITH tail AS (
    SELECT i.user_id, i.value
    FROM impressions i
    WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key AND i.id > @impressions_after
), counts AS (
    SELECT dd.value, (dd.impressions + dd.summarized) AS n
    FROM impression_daily dd
    WHERE dd.environment_id = @environment_id AND dd.flag_key = @flag_key
    UNION ALL
    SELECT t.value, count(*) FROM tail t GROUP BY t.value
    UNION ALL
    SELECT s.value, sum(s.count)::bigint
    FROM impression_summaries s
    WHERE s.environment_id = @environment_id AND s.flag_key = @flag_key AND s.id > @summaries_after
    GROUP BY s.value
), users AS (
    SELECT vu.value, vu.users AS n
    FROM impression_value_users vu
    WHERE vu.environment_id = @environment_id AND vu.flag_key = @flag_key
    UNION ALL
    SELECT t.value, count(DISTINCT t.user_id)
    FROM tail t
    WHERE t.user_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM impression_variant_users v
        WHERE v.environment_id = @environment_id AND v.flag_key = @flag_key
          AND md5(v.value) = md5(t.value) AND v.value = t.value AND v.user_id = t.user_id)
    GROUP BY t.value
)
SELECT c.value,
       sum(c.n)::bigint AS impressions,
       coalesce((SELECT sum(u.n) FROM users u WHERE u.value = c.value), 0)::bigint AS unique_users
FROM counts c
GROUP BY c.value
ORDER BY c.value;

-- name: ListExposureTimeline :many
-- Rollups through the watermarks plus the raw rows after them (read.go).
WITH days AS (
    SELECT dd.day, dd.value, (dd.impressions + dd.summarized) AS n
    FROM impression_daily dd
    WHERE dd.environment_id = @environment_id AND dd.flag_key = @flag_key AND dd.day >= @first_day
    UNION ALL
    SELECT (i.evaluated_at AT TIME ZONE 'UTC')::date, i.value, count(*)
    FROM impressions i
    WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key AND i.id > @impressions_after
      AND i.evaluated_at >= (@first_day::date)::timestamp AT TIME ZONE 'UTC'
    GROUP BY 1, 2
    UNION ALL
    SELECT (s.end_at AT TIME ZONE 'UTC')::date, s.value, sum(s.count)::bigint
    FROM impression_summaries s
    WHERE s.environment_id = @environment_id AND s.flag_key = @flag_key AND s.id > @summaries_after
      AND s.end_at >= (@first_day::date)::timestamp AT TIME ZONE 'UTC'
    GROUP BY 1, 2
)
SELECT d.day::date AS day, d.value, sum(d.n)::bigint AS impressions
FROM days d
GROUP BY d.day, d.value
ORDER BY d.day, d.value;

-- name: GetFlagUsers :one
-- Rollups through the watermark plus the raw rows after it (read.go).
SELECT (coalesce((SELECT u.users FROM impression_flag_users u
                  WHERE u.environment_id = @environment_id AND u.flag_key = @flag_key), 0)
      + (SELECT count(DISTINCT i.user_id) FROM impressions i
         WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key AND i.id > @impressions_after
           AND i.user_id IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM impression_exposures x
               WHERE x.environment_id = @environment_id AND x.flag_key = @flag_key AND x.user_id = i.user_id)))::bigint;

-- name: ListExperimentArms :many
-- Per variant of first exposure: users exposed, and users whose latest goal
-- event of the key occurred at or after their first exposure. Rollups
-- through the watermarks plus the raw rows after them (read.go): a user's
-- first exposure in the tail replaces the rolled-up one only when it is
-- strictly earlier (ties go to the earlier ingest, which is rolled up).
WITH tail AS (
    SELECT DISTINCT ON (i.user_id) i.user_id, i.value, i.evaluated_at AS at
    FROM impressions i
    WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key
      AND i.id > @impressions_after AND i.user_id IS NOT NULL
    ORDER BY i.user_id, i.evaluated_at, i.id
), firsts AS (
    SELECT e.user_id, e.value, e.first_at
    FROM impression_exposures e
    WHERE e.environment_id = @environment_id AND e.flag_key = @flag_key
      AND NOT EXISTS (SELECT 1 FROM tail t WHERE t.user_id = e.user_id AND t.at < e.first_at)
    UNION ALL
    SELECT t.user_id, t.value, t.at
    FROM tail t
    WHERE NOT EXISTS (
        SELECT 1 FROM impression_exposures x
        WHERE x.environment_id = @environment_id AND x.flag_key = @flag_key
          AND x.user_id = t.user_id AND x.first_at <= t.at)
), goals AS (
    SELECT g.user_id, g.last_at
    FROM goal_event_users g
    WHERE g.environment_id = @environment_id AND g.event_key = @goal_event_key
    UNION ALL
    SELECT ge.user_id, max(ge.occurred_at)
    FROM goal_events ge
    WHERE ge.environment_id = @environment_id AND ge.event_key = @goal_event_key
      AND ge.id > @events_after AND ge.user_id IS NOT NULL
    GROUP BY ge.user_id
), last_goal AS (
    SELECT gl.user_id, max(gl.last_at) AS last_at FROM goals gl GROUP BY gl.user_id
)
SELECT f.value AS variant,
       count(*)::bigint AS exposed,
       count(*) FILTER (WHERE lg.last_at >= f.first_at)::bigint AS converted
FROM firsts f
LEFT JOIN last_goal lg ON lg.user_id = f.user_id
GROUP BY f.value
ORDER BY f.value;

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
    RETURNING v.environment_id, v.flag_key, v.value
), counted AS (
    UPDATE impression_value_users u SET users = u.users - c.n
    FROM (SELECT d.environment_id, d.flag_key, d.value, count(*) AS n FROM deleted d
          GROUP BY d.environment_id, d.flag_key, d.value) c
    WHERE u.environment_id = c.environment_id AND u.flag_key = c.flag_key
      AND md5(u.value) = md5(c.value) AND u.value = c.value
)
SELECT count(*) FROM stale;

-- name: DeleteEmptyFlagUsers :execrows
DELETE FROM impression_flag_users WHERE users <= 0;

-- name: DeleteEmptyValueUsers :execrows
DELETE FROM impression_value_users WHERE users <= 0;
