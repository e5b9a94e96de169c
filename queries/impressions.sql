-- Impressions: raw rows (COPY at ingest) and the rollups of
-- migrations/00003_measurement.sql, folded in after ingest (rollups.sql).

-- name: CopyImpressions :copyfrom
INSERT INTO impressions (environment_id, flag_key, user_id, value, context, evaluated_at)
VALUES (@environment_id, @flag_key, @user_id, @value, @context, @evaluated_at);

-- name: InternImpressionKeys :exec
-- Numbers the flags and values of the identified impressions with
-- after_id < id <= through_id that measure_flags and measure_values do not
-- hold yet: FoldImpressions, which runs next in the same transaction, finds
-- them by number (migrations/00018_impression_users.sql).
WITH keys AS (
    SELECT DISTINCT r.environment_id, r.flag_key, r.value
    FROM impressions r
    WHERE r.id > @after_id AND r.id <= @through_id AND r.user_id IS NOT NULL
), new_flags AS (
    INSERT INTO measure_flags (environment_id, flag_key)
    SELECT DISTINCT k.environment_id, k.flag_key FROM keys k
    ORDER BY 1, 2
    ON CONFLICT (environment_id, flag_key) DO NOTHING
    RETURNING flag_no, environment_id, flag_key
), flags AS (
    SELECT n.flag_no, n.environment_id, n.flag_key FROM new_flags n
    UNION ALL
    SELECT f.flag_no, f.environment_id, f.flag_key FROM measure_flags f
    WHERE (f.environment_id, f.flag_key) IN (SELECT k.environment_id, k.flag_key FROM keys k)
)
INSERT INTO measure_values (flag_no, value)
SELECT DISTINCT f.flag_no, k.value
FROM keys k
JOIN flags f ON f.environment_id = k.environment_id AND f.flag_key = k.flag_key
ORDER BY 1, 2
ON CONFLICT (flag_no, md5(value)) DO NOTHING;

-- name: FoldImpressions :exec
-- Folds the raw rows with after_id < id <= through_id into the rollups
-- (server/measure/rollups.go), after InternImpressionKeys: one statement per
-- range, which the caller keeps to a bounded width, and the only writer of
-- impression_users while it runs (the caller holds the watermark's lock,
-- as retention does when it changes the table).
--
-- Per identified (flag, user, value) of the range, its earliest impression
-- (ties by id, ingest order) and one index look at the user's rows of the
-- flag: a value new to the user is inserted; a known one is updated only
-- when the range has an earlier impression of it (rows folded before have
-- smaller ids, so a known row wins a tie), and otherwise left alone: no
-- lock, no write. Exactly one row of each user is marked first, the
-- earliest (first_at, first_id): a change earlier than it takes the mark.
-- A user with no row of the flag before is a new user of the flag; an
-- inserted row is a new user of its value.
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
), firsts AS (
    -- Sorted bytewise ("C"): cheaper than the database's collation, and
    -- only grouping needs the order.
    SELECT DISTINCT ON (f.flag_no, b.user_id COLLATE "C", v.value_no) f.flag_no, b.user_id, v.value_no, b.at, b.id
    FROM batch b
    JOIN measure_flags f ON f.environment_id = b.environment_id AND f.flag_key = b.flag_key
    JOIN measure_values v ON v.flag_no = f.flag_no AND v.value = b.value
    WHERE b.user_id IS NOT NULL
    ORDER BY f.flag_no, b.user_id COLLATE "C", v.value_no, b.at, b.id
), known AS (
    -- An aggregate in LATERAL is never flattened into a join: one probe of
    -- the primary key per (flag, user, value), whatever the table's size.
    -- It finds the row of the value, if any, and the user's first exposure
    -- (the one row marked first, when the user has rows).
    SELECT n.flag_no, n.user_id, n.value_no, n.at, n.id, k.user_known, k.known_at, k.known_row,
           k.cur_at, k.cur_id, k.cur_value, k.cur_row
    FROM firsts n
    CROSS JOIN LATERAL (
        SELECT count(*) > 0 AS user_known,
               min(u.first_at) FILTER (WHERE u.value_no = n.value_no) AS known_at,
               min(u.ctid) FILTER (WHERE u.value_no = n.value_no) AS known_row,
               min(u.first_at) FILTER (WHERE u.first) AS cur_at,
               min(u.first_id) FILTER (WHERE u.first) AS cur_id,
               min(u.value_no) FILTER (WHERE u.first) AS cur_value,
               min(u.ctid) FILTER (WHERE u.first) AS cur_row
        FROM impression_users u
        WHERE u.flag_no = n.flag_no AND u.user_id = n.user_id
    ) k
), decided AS (
    -- What the range changes: values new to the user, and known values it
    -- has an earlier impression of; everything else is left alone. Per
    -- user, the earliest change becomes the first exposure when it is
    -- earlier than the current one (or the user is new), and one row of a
    -- user new to the flag counts them. Window functions, not a join of two
    -- CTEs: the planner cannot estimate a CTE's rows, and a nested loop over
    -- two of them is quadratic.
    SELECT c.flag_no, c.user_id, c.value_no, c.at, c.id, c.known_row, c.cur_value, c.cur_at, c.cur_row,
           (row_number() OVER per_user = 1 AND (c.cur_row IS NULL OR (c.at, c.id) < (c.cur_at, c.cur_id))) AS first,
           bool_or(c.value_no = c.cur_value) OVER per_user AS cur_changed,
           (row_number() OVER per_user = 1 AND NOT c.user_known) AS new_user
    FROM known c
    WHERE c.known_row IS NULL OR c.at < c.known_at
    WINDOW per_user AS (PARTITION BY c.flag_no, c.user_id COLLATE "C" ORDER BY c.at, c.id
                        ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
), inserted AS (
    -- In the order of the window: by flag and user, near the key's order.
    INSERT INTO impression_users (flag_no, user_id, value_no, first_at, first_id, first)
    SELECT flag_no, user_id, value_no, at, id, first FROM decided
    WHERE known_row IS NULL
), earlier AS (
    UPDATE impression_users u SET first_at = d.at, first_id = d.id, first = d.first
    FROM decided d
    WHERE d.known_row IS NOT NULL AND u.ctid = d.known_row
), demoted AS (
    -- The previous first exposure, when another value took its place and
    -- the range did not change its own row (earlier, above, did).
    UPDATE impression_users u SET first = false
    FROM decided d
    WHERE d.first AND d.cur_row IS NOT NULL AND d.cur_value <> d.value_no AND NOT d.cur_changed
      AND u.ctid = d.cur_row
), experiment_changes AS (
    -- Users whose first exposure the range sets or moves, once per ready
    -- experiment metric of their flag (migrations/00023): they leave the
    -- arm and conversion they had and take the new ones, judged against
    -- their latest goal event of the metric's key (one probe each).
    SELECT m.metric_no, d.value_no, d.at, d.cur_value, d.cur_at, g.last_at
    FROM decided d
    JOIN measure_flags f ON f.flag_no = d.flag_no
    JOIN experiment_metrics m ON m.environment_id = f.environment_id AND m.flag_key = f.flag_key AND m.ready
    LEFT JOIN LATERAL (
        SELECT x.last_at FROM goal_event_users x
        WHERE x.environment_id = m.environment_id AND x.event_key = m.event_key AND x.user_id = d.user_id
        LIMIT 1
    ) g ON true
    WHERE d.first
), experiment_counts AS (
    INSERT INTO experiment_arm_counts AS ec (metric_no, value_no, exposed, converted)
    SELECT x.metric_no, x.value_no, sum(x.exposed), sum(x.converted)
    FROM (
        SELECT e.metric_no, e.value_no, 1 AS exposed, CASE WHEN e.last_at >= e.at THEN 1 ELSE 0 END AS converted
        FROM experiment_changes e
        UNION ALL
        SELECT e.metric_no, e.cur_value, -1, -(CASE WHEN e.last_at >= e.cur_at THEN 1 ELSE 0 END)
        FROM experiment_changes e
        WHERE e.cur_value IS NOT NULL
    ) x
    GROUP BY x.metric_no, x.value_no
    ORDER BY x.metric_no, x.value_no
    ON CONFLICT (metric_no, value_no) DO UPDATE
    SET exposed = ec.exposed + excluded.exposed, converted = ec.converted + excluded.converted
), value_users AS (
    UPDATE measure_values v SET users = v.users + c.n
    FROM (SELECT value_no, count(*) AS n FROM decided WHERE known_row IS NULL GROUP BY value_no) c
    WHERE v.value_no = c.value_no
)
UPDATE measure_flags f SET users = f.users + c.n
FROM (SELECT flag_no, count(*) AS n FROM decided WHERE new_user GROUP BY flag_no) c
WHERE f.flag_no = c.flag_no;

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
), flags AS (
    SELECT mf.flag_no, mf.flag_key, mf.users FROM measure_flags mf WHERE mf.environment_id = @environment_id
), new_users AS (
    -- Users of the tail with no row of the flag (none at all when the flag
    -- has no number yet).
    SELECT t.flag_key, count(DISTINCT t.user_id) AS users
    FROM tail t
    LEFT JOIN flags f ON f.flag_key = t.flag_key
    WHERE t.user_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM impression_users x WHERE x.flag_no = f.flag_no AND x.user_id = t.user_id)
    GROUP BY t.flag_key
)
SELECT d.flag_key,
       d.total::bigint AS total,
       d.true_count::bigint AS true_count,
       d.false_count::bigint AS false_count,
       (coalesce(f.users, 0) + coalesce(nu.users, 0))::bigint AS unique_users,
       d.last_seen::timestamptz AS last_seen
FROM d
LEFT JOIN flags f ON f.flag_key = d.flag_key
LEFT JOIN new_users nu ON nu.flag_key = d.flag_key
ORDER BY d.flag_key;

-- name: ListExposureVariants :many
-- Rollups through the watermarks plus the raw rows after them (read.go).
WITH flag AS (
    SELECT mf.flag_no FROM measure_flags mf WHERE mf.environment_id = @environment_id AND mf.flag_key = @flag_key
), tail AS (
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
    SELECT mv.value, mv.users AS n
    FROM measure_values mv
    WHERE mv.flag_no = (SELECT flag_no FROM flag)
    UNION ALL
    SELECT t.value, count(DISTINCT t.user_id)
    FROM tail t
    LEFT JOIN measure_values mv ON mv.flag_no = (SELECT flag_no FROM flag) AND mv.value = t.value
    WHERE t.user_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM impression_users x
        WHERE x.flag_no = mv.flag_no AND x.user_id = t.user_id AND x.value_no = mv.value_no)
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
WITH flag AS (
    SELECT mf.flag_no, mf.users FROM measure_flags mf WHERE mf.environment_id = @environment_id AND mf.flag_key = @flag_key
)
SELECT (coalesce((SELECT f.users FROM flag f), 0)
      + (SELECT count(DISTINCT i.user_id) FROM impressions i
         WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key AND i.id > @impressions_after
           AND i.user_id IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM impression_users x
               WHERE x.flag_no = (SELECT f.flag_no FROM flag f) AND x.user_id = i.user_id)))::bigint;

-- name: ListExperimentArms :many
-- Per variant of first exposure: users exposed, and users whose latest goal
-- event of the key occurred at or after their first exposure. Rollups
-- through the watermarks plus the raw rows after them (read.go): a user's
-- rolled-up first exposure is their row marked first; one in the tail
-- replaces it only when it is strictly earlier (ties go to the earlier
-- ingest, which is rolled up). A user's latest goal event is the later of
-- their rolled-up one (one row per user: a join, not a regrouping of every
-- user's) and the tail's. Rolled-up users are counted per value number and
-- named once per value afterwards, rather than each user's value looked up.
WITH flag AS (
    SELECT mf.flag_no FROM measure_flags mf WHERE mf.environment_id = @environment_id AND mf.flag_key = @flag_key
), tail AS (
    SELECT DISTINCT ON (i.user_id) i.user_id, i.value, i.evaluated_at AS at
    FROM impressions i
    WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key
      AND i.id > @impressions_after AND i.user_id IS NOT NULL
    ORDER BY i.user_id, i.evaluated_at, i.id
), tail_goals AS (
    SELECT ge.user_id, max(ge.occurred_at) AS last_at
    FROM goal_events ge
    WHERE ge.environment_id = @environment_id AND ge.event_key = @goal_event_key
      AND ge.id > @events_after AND ge.user_id IS NOT NULL
    GROUP BY ge.user_id
), rolled AS (
    SELECT u.value_no, count(*) AS exposed,
           count(*) FILTER (WHERE greatest(g.last_at, tg.last_at) >= u.first_at) AS converted
    FROM impression_users u
    LEFT JOIN goal_event_users g
           ON g.environment_id = @environment_id AND g.event_key = @goal_event_key AND g.user_id = u.user_id
    LEFT JOIN tail_goals tg ON tg.user_id = u.user_id
    WHERE u.flag_no = (SELECT f.flag_no FROM flag f) AND u.first
      AND NOT EXISTS (SELECT 1 FROM tail t WHERE t.user_id = u.user_id AND t.at < u.first_at)
    GROUP BY u.value_no
), fresh AS (
    SELECT t.value, count(*) AS exposed,
           count(*) FILTER (WHERE greatest(g.last_at, tg.last_at) >= t.at) AS converted
    FROM tail t
    LEFT JOIN goal_event_users g
           ON g.environment_id = @environment_id AND g.event_key = @goal_event_key AND g.user_id = t.user_id
    LEFT JOIN tail_goals tg ON tg.user_id = t.user_id
    WHERE NOT EXISTS (
        SELECT 1 FROM impression_users x
        WHERE x.flag_no = (SELECT f.flag_no FROM flag f) AND x.user_id = t.user_id AND x.first_at <= t.at)
    GROUP BY t.value
), counts AS (
    SELECT mv.value, r.exposed, r.converted FROM rolled r JOIN measure_values mv ON mv.value_no = r.value_no
    UNION ALL
    SELECT f.value, f.exposed, f.converted FROM fresh f
)
SELECT c.value AS variant, sum(c.exposed)::bigint AS exposed, sum(c.converted)::bigint AS converted
FROM counts c
GROUP BY c.value
ORDER BY c.value;

-- name: DeleteExpiredImpressions :execrows
DELETE FROM impressions
WHERE id IN (SELECT x.id FROM impressions x WHERE x.evaluated_at < @cutoff LIMIT @batch_size);

-- name: DeleteExpiredImpressionDays :execrows
DELETE FROM impression_daily WHERE day < @cutoff_day;

-- name: ListExpiredImpressionUsers :many
-- A batch of per-user rows whose first impression is older than the
-- cutoff, as their (flag, user) pairs, one per row: retention refreshes
-- those users (RefreshExpiredImpressionUsers) under the impression fold's
-- watermark lock.
SELECT u.flag_no, u.user_id FROM impression_users u WHERE u.first_at < @cutoff LIMIT @batch_size;

-- name: RefreshExpiredImpressionUsers :exec
-- The given users' rows whose first impression is older than the cutoff:
-- each takes the earliest remaining impression of its (flag, user, value)
-- (ties by id), or disappears, with its value's user counter and, when it
-- was the user's last row of the flag, its flag's. MarkFirstExposures
-- follows for the same users. The caller holds the impression fold's
-- watermark lock: no fold changes the table meanwhile. The arrays are
-- zipped.
WITH pairs AS (
    SELECT DISTINCT p.flag_no, p.user_id
    FROM (SELECT unnest(@flag_nos::integer[]) AS flag_no, unnest(@user_ids::text[]) AS user_id) p
), stale AS (
    SELECT u.ctid::tid AS row, u.flag_no, u.user_id, u.value_no, f.environment_id, f.flag_key, v.value
    FROM pairs p
    JOIN impression_users u ON u.flag_no = p.flag_no AND u.user_id = p.user_id
    JOIN measure_flags f ON f.flag_no = u.flag_no
    JOIN measure_values v ON v.value_no = u.value_no
    WHERE u.first_at < @cutoff
), fresh AS (
    SELECT s.row, s.flag_no, s.user_id, s.value_no, r.evaluated_at, r.id
    FROM stale s
    LEFT JOIN LATERAL (
        SELECT i.evaluated_at, i.id FROM impressions i
        WHERE i.environment_id = s.environment_id AND i.flag_key = s.flag_key
          AND i.user_id = s.user_id AND i.value = s.value AND i.evaluated_at >= @cutoff
        ORDER BY i.evaluated_at, i.id
        LIMIT 1
    ) r ON true
), updated AS (
    UPDATE impression_users u SET first_at = f.evaluated_at, first_id = f.id
    FROM fresh f
    WHERE f.evaluated_at IS NOT NULL AND u.ctid = f.row
), deleted AS (
    DELETE FROM impression_users u
    USING fresh f
    WHERE f.evaluated_at IS NULL AND u.ctid = f.row
    RETURNING u.flag_no, u.user_id, u.value_no
), value_users AS (
    UPDATE measure_values v SET users = v.users - c.n
    FROM (SELECT d.value_no, count(*) AS n FROM deleted d GROUP BY d.value_no) c
    WHERE v.value_no = c.value_no
), gone AS (
    -- Users left with no row of the flag. The statement's snapshot still
    -- shows the rows it deletes, so count them against the user's rows.
    SELECT d.flag_no, count(*) AS n
    FROM (SELECT dd.flag_no, dd.user_id, count(*) AS k FROM deleted dd GROUP BY dd.flag_no, dd.user_id) d
    WHERE d.k = (SELECT count(*) FROM impression_users x WHERE x.flag_no = d.flag_no AND x.user_id = d.user_id)
    GROUP BY d.flag_no
)
UPDATE measure_flags f SET users = f.users - g.n
FROM gone g
WHERE f.flag_no = g.flag_no;

-- name: MarkFirstExposures :exec
-- Marks each given user's earliest row of the flag (first_at, then
-- first_id) first and their other rows not, after RefreshExpiredImpressionUsers
-- moved or deleted some of them (in the same transaction).
WITH pairs AS (
    -- The arrays are zipped: unnest in a select list walks them together.
    SELECT unnest(@flag_nos::integer[]) AS flag_no, unnest(@user_ids::text[]) AS user_id
), users AS (
    SELECT DISTINCT pr.flag_no, pr.user_id FROM pairs pr
), marks AS (
    SELECT x.row, (x.row = e.row) AS first
    FROM users us
    CROSS JOIN LATERAL (
        SELECT y.ctid::tid AS row FROM impression_users y
        WHERE y.flag_no = us.flag_no AND y.user_id = us.user_id
        ORDER BY y.first_at, y.first_id
        LIMIT 1
    ) e
    CROSS JOIN LATERAL (
        SELECT y.ctid::tid AS row, y.first FROM impression_users y
        WHERE y.flag_no = us.flag_no AND y.user_id = us.user_id
    ) x
    WHERE x.first <> (x.row = e.row)
)
UPDATE impression_users u SET first = m.first
FROM marks m
WHERE u.ctid = m.row;
