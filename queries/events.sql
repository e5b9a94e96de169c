-- Goal events: raw rows (COPY at ingest) and the rollups of
-- migrations/00003_measurement.sql, folded in after ingest (rollups.sql).

-- name: CopyGoalEvents :copyfrom
INSERT INTO goal_events (environment_id, event_key, user_id, value, context, occurred_at, received_at)
VALUES (@environment_id, @event_key, @user_id, @value, @context, @occurred_at, @received_at);

-- name: FoldGoalEvents :exec
-- Folds the raw rows with after_id < id <= through_id into the rollups
-- (server/measure/rollups.go). Rows are upserted in primary-key order.
WITH batch AS (
    SELECT environment_id, event_key, user_id, occurred_at AS at
    FROM goal_events r
    WHERE r.id > @after_id AND r.id <= @through_id
), latest AS (
    -- Each user's latest event of the range, with the one already known
    -- (one probe each).
    SELECT n.environment_id, n.event_key, n.user_id, n.last_at, k.last_at AS known_at
    FROM (
        SELECT environment_id, event_key, user_id, max(at) AS last_at
        FROM batch
        WHERE user_id IS NOT NULL
        GROUP BY environment_id, event_key, user_id
    ) n
    LEFT JOIN LATERAL (
        SELECT x.last_at FROM goal_event_users x
        WHERE x.environment_id = n.environment_id AND x.event_key = n.event_key AND x.user_id = n.user_id
        LIMIT 1
    ) k ON true
), users AS (
    -- Probing first leaves a user whose later event is already known
    -- unwritten (queries/impressions.sql, FoldImpressions).
    INSERT INTO goal_event_users AS g (environment_id, event_key, user_id, last_at)
    SELECT l.environment_id, l.event_key, l.user_id, l.last_at
    FROM latest l
    WHERE l.known_at IS NULL OR l.known_at < l.last_at
    ORDER BY l.environment_id, l.event_key, l.user_id
    ON CONFLICT (environment_id, event_key, user_id) DO UPDATE
    SET last_at = excluded.last_at
    WHERE excluded.last_at > g.last_at
    -- xmax is 0 exactly for rows this statement inserted (not updated).
    RETURNING g.environment_id, g.event_key, (g.xmax = 0) AS inserted
), new_users AS (
    SELECT environment_id, event_key, count(*) AS n FROM users WHERE inserted GROUP BY environment_id, event_key
), experiment_changes AS (
    -- A user converts in a ready experiment metric of the key
    -- (migrations/00023) when their latest event moves from none, or from
    -- before their first exposure to the flag, to at or after it.
    SELECT m.metric_no, u.value_no, count(*) AS n
    FROM latest l
    JOIN experiment_metrics m ON m.environment_id = l.environment_id AND m.event_key = l.event_key AND m.ready
    JOIN measure_flags f ON f.environment_id = m.environment_id AND f.flag_key = m.flag_key
    CROSS JOIN LATERAL (
        SELECT y.value_no, y.first_at FROM impression_users y
        WHERE y.flag_no = f.flag_no AND y.user_id = l.user_id AND y.first
        LIMIT 1
    ) u
    WHERE l.last_at >= u.first_at AND (l.known_at IS NULL OR l.known_at < u.first_at)
    GROUP BY m.metric_no, u.value_no
), experiment_counts AS (
    -- The user's first exposure is counted, so its arm's row exists.
    UPDATE experiment_arm_counts c SET converted = c.converted + e.n
    FROM experiment_changes e
    WHERE c.metric_no = e.metric_no AND c.value_no = e.value_no
)
INSERT INTO goal_event_keys AS k (environment_id, event_key, total, unique_users, last_seen)
SELECT b.environment_id, b.event_key, count(*), coalesce(max(n.n), 0), max(b.at)
FROM batch b
LEFT JOIN new_users n ON n.environment_id = b.environment_id AND n.event_key = b.event_key
GROUP BY b.environment_id, b.event_key
ORDER BY b.environment_id, b.event_key
ON CONFLICT (environment_id, event_key) DO UPDATE
SET total = k.total + excluded.total,
    unique_users = k.unique_users + excluded.unique_users,
    last_seen = greatest(k.last_seen, excluded.last_seen);

-- name: ListEventKeys :many
-- Rollups through the watermark plus the raw rows after it (read.go).
WITH tail AS (
    SELECT ge.event_key, ge.user_id, ge.occurred_at
    FROM goal_events ge
    WHERE ge.environment_id = @environment_id AND ge.id > @events_after
), keys AS (
    SELECT k.event_key, k.total, k.unique_users, k.last_seen
    FROM goal_event_keys k
    WHERE k.environment_id = @environment_id
    UNION ALL
    SELECT t.event_key, count(*), count(DISTINCT t.user_id) FILTER (WHERE NOT EXISTS (
               SELECT 1 FROM goal_event_users g
               WHERE g.environment_id = @environment_id AND g.event_key = t.event_key AND g.user_id = t.user_id)),
           max(t.occurred_at)
    FROM tail t
    GROUP BY t.event_key
)
SELECT ks.event_key, sum(ks.total)::bigint AS total, sum(ks.unique_users)::bigint AS unique_users,
       max(ks.last_seen)::timestamptz AS last_seen
FROM keys ks
GROUP BY ks.event_key
HAVING sum(ks.total) > 0
ORDER BY ks.event_key;

-- name: DeleteExpiredGoalEvents :one
-- A batch of goal events older than the cutoff, with their keys' totals.
WITH deleted AS (
    DELETE FROM goal_events
    WHERE id IN (SELECT x.id FROM goal_events x WHERE x.occurred_at < @cutoff LIMIT @batch_size)
    RETURNING environment_id, event_key
), per_key AS (
    SELECT environment_id, event_key, count(*) AS n FROM deleted GROUP BY environment_id, event_key
), counted AS (
    UPDATE goal_event_keys k SET total = k.total - p.n
    FROM per_key p
    WHERE k.environment_id = p.environment_id AND k.event_key = p.event_key
)
SELECT coalesce(sum(n), 0)::bigint FROM per_key;

-- name: DeleteExpiredGoalEventUsers :one
-- Users whose latest event of a key is older than the cutoff have no event of
-- it left: they leave the key's distinct users, and the converted users of
-- each ready experiment metric of the key (migrations/00023) they had
-- converted in. Under LockExperimentCounts.
WITH deleted AS (
    DELETE FROM goal_event_users
    WHERE (environment_id, event_key, user_id) IN (
        SELECT x.environment_id, x.event_key, x.user_id FROM goal_event_users x
        WHERE x.last_at < @cutoff LIMIT @batch_size)
    RETURNING environment_id, event_key, user_id, last_at
), per_key AS (
    SELECT environment_id, event_key, count(*) AS n FROM deleted GROUP BY environment_id, event_key
), counted AS (
    UPDATE goal_event_keys k SET unique_users = k.unique_users - p.n
    FROM per_key p
    WHERE k.environment_id = p.environment_id AND k.event_key = p.event_key
), experiment_changes AS (
    SELECT m.metric_no, u.value_no, count(*) AS n
    FROM deleted d
    JOIN experiment_metrics m ON m.environment_id = d.environment_id AND m.event_key = d.event_key AND m.ready
    JOIN measure_flags f ON f.environment_id = m.environment_id AND f.flag_key = m.flag_key
    CROSS JOIN LATERAL (
        SELECT y.value_no, y.first_at FROM impression_users y
        WHERE y.flag_no = f.flag_no AND y.user_id = d.user_id AND y.first
        LIMIT 1
    ) u
    WHERE d.last_at >= u.first_at
    GROUP BY m.metric_no, u.value_no
), experiment_counts AS (
    UPDATE experiment_arm_counts c SET converted = c.converted - e.n
    FROM experiment_changes e
    WHERE c.metric_no = e.metric_no AND c.value_no = e.value_no
)
SELECT coalesce(sum(n), 0)::bigint FROM per_key;

-- name: DeleteEmptyEventKeys :execrows
DELETE FROM goal_event_keys WHERE total <= 0;
