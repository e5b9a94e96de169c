-- Experiment results kept current by the fold
-- (migrations/00023_experiment_counts.sql, server/measure/experiment_counts.go).

-- name: LockExperimentCounts :exec
-- Held by every transaction that changes first exposures, latest goal
-- events or the experiment metrics: the folds of both kinds, retention,
-- the builder, and experiment writes that add or drop metrics. A
-- transaction decides each user's change of the counts from both rollups,
-- so it must see every change the others committed: it takes this lock in
-- a statement of its own, and the statements after it take their
-- snapshots once the others have committed.
SELECT pg_advisory_xact_lock(5206719411370086591);

-- name: EnsureExperimentMetric :exec
-- A new metric is counted by the builder before reads use it.
INSERT INTO experiment_metrics (environment_id, flag_key, event_key)
VALUES (@environment_id, @flag_key, @event_key)
ON CONFLICT (environment_id, flag_key, event_key) DO NOTHING;

-- name: DeleteUnusedExperimentMetrics :exec
-- The environment's metrics no experiment measures any more (their counts
-- go with them), under LockExperimentCounts: no fold is adding to them.
DELETE FROM experiment_metrics m
WHERE m.environment_id = @environment_id AND NOT EXISTS (
    SELECT 1 FROM experiments e
    WHERE e.environment_id = m.environment_id AND e.flag_key = m.flag_key AND e.goal_event_key = m.event_key);

-- name: HasUnbuiltExperimentMetric :one
SELECT EXISTS (SELECT 1 FROM experiment_metrics WHERE NOT ready);

-- name: GetUnbuiltExperimentMetric :one
-- Under LockExperimentCounts: one builder at a time, across instances.
SELECT * FROM experiment_metrics WHERE NOT ready ORDER BY metric_no LIMIT 1;

-- name: ClearExperimentArmCounts :exec
DELETE FROM experiment_arm_counts WHERE metric_no = @metric_no;

-- name: CountExperimentArms :exec
-- A metric's counts from the rollups, once, under LockExperimentCounts:
-- the folds keep them from then on. The join of a flag's users with the
-- key's is whole, as the computation at read time was, but runs once.
INSERT INTO experiment_arm_counts (metric_no, value_no, exposed, converted)
SELECT @metric_no, u.value_no, count(*), count(*) FILTER (WHERE g.last_at >= u.first_at)
FROM impression_users u
LEFT JOIN goal_event_users g
       ON g.environment_id = @environment_id AND g.event_key = @event_key AND g.user_id = u.user_id
WHERE u.flag_no = (SELECT f.flag_no FROM measure_flags f WHERE f.environment_id = @environment_id AND f.flag_key = @flag_key)
  AND u.first
GROUP BY u.value_no;

-- name: MarkExperimentMetricReady :exec
UPDATE experiment_metrics SET ready = true WHERE metric_no = @metric_no;

-- name: GetExperimentMetricReady :one
-- Whether the counts of (flag, goal event key) are kept and built.
SELECT EXISTS (
    SELECT 1 FROM experiment_metrics
    WHERE environment_id = @environment_id AND flag_key = @flag_key AND event_key = @event_key AND ready);

-- name: AdjustExperimentUsers :exec
-- Adds (sign 1) or takes away (sign -1) the given users' part of the
-- counts of every ready metric of their flags, as the rollups hold it now:
-- retention takes it away before it moves their first exposures and adds
-- it back afterwards. The arrays are zipped, one entry per (flag, user).
WITH pairs AS (
    SELECT DISTINCT p.flag_no, p.user_id
    FROM (SELECT unnest(@flag_nos::integer[]) AS flag_no, unnest(@user_ids::text[]) AS user_id) p
), parts AS (
    SELECT m.metric_no, u.value_no, count(*) AS exposed,
           count(*) FILTER (WHERE g.last_at >= u.first_at) AS converted
    FROM pairs p
    JOIN measure_flags f ON f.flag_no = p.flag_no
    JOIN experiment_metrics m ON m.environment_id = f.environment_id AND m.flag_key = f.flag_key AND m.ready
    CROSS JOIN LATERAL (
        SELECT y.value_no, y.first_at FROM impression_users y
        WHERE y.flag_no = p.flag_no AND y.user_id = p.user_id AND y.first
        LIMIT 1
    ) u
    LEFT JOIN LATERAL (
        SELECT x.last_at FROM goal_event_users x
        WHERE x.environment_id = m.environment_id AND x.event_key = m.event_key AND x.user_id = p.user_id
        LIMIT 1
    ) g ON true
    GROUP BY m.metric_no, u.value_no
)
INSERT INTO experiment_arm_counts AS c (metric_no, value_no, exposed, converted)
SELECT pt.metric_no, pt.value_no, s.sign * pt.exposed, s.sign * pt.converted
FROM parts pt CROSS JOIN (SELECT @sign::bigint AS sign) s
ORDER BY 1, 2
ON CONFLICT (metric_no, value_no) DO UPDATE
SET exposed = c.exposed + excluded.exposed, converted = c.converted + excluded.converted;

-- name: ListExperimentArmCounts :many
-- Per variant of first exposure, users exposed and converted: the kept
-- counts, which hold the rollups through the watermarks, corrected for the
-- users of the raw rows after them (read.go), the same way
-- ListExperimentArms combines them. Each such user is looked up in the
-- rollups (one primary-key probe each; LIMIT keeps the planner from joining
-- the rollups whole), taken out of the arm the counts hold them in, and put
-- into the one the tail gives them: the tail's earliest impression replaces
-- their first exposure only when it is strictly earlier (ties go to the
-- earlier ingest, which is rolled up), and their latest goal event is the
-- later of the two. The raw rows are grouped by user, not joined as two
-- sets: the planner cannot estimate either. Each raw table's tail is a
-- range of ids closed by the table's largest id, which the planner takes
-- for a small range with or without statistics (an open one it may take
-- for a third of the table, and scan the table whole): the flag's
-- impressions through their index on (environment, flag, id), the goal
-- events by id alone and filtered afterwards (MATERIALIZED keeps the
-- filters out of the scan), since their index on (environment, key) holds
-- every event of the key, which the planner would otherwise prefer.
WITH flag AS (
    SELECT mf.flag_no FROM measure_flags mf WHERE mf.environment_id = @environment_id AND mf.flag_key = @flag_key
), metric AS (
    SELECT m.metric_no FROM experiment_metrics m
    WHERE m.environment_id = @environment_id AND m.flag_key = @flag_key AND m.event_key = @goal_event_key
), tail_events AS MATERIALIZED (
    SELECT ge.environment_id, ge.event_key, ge.user_id, ge.occurred_at
    FROM goal_events ge
    WHERE ge.id > @events_after AND ge.id <= (SELECT max(x.id) FROM goal_events x)
), tail AS (
    -- Each user's earliest impression of the tail (ties by id) and latest
    -- goal event, then one row per user.
    SELECT fi.user_id, fi.at, fi.value, NULL::timestamptz AS goal_at
    FROM (
        -- Sorted bytewise ("C"), as the fold sorts: only grouping needs the order.
        SELECT DISTINCT ON (i.user_id COLLATE "C") i.user_id, i.evaluated_at AS at, i.value
        FROM impressions i
        WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key
          AND i.id > @impressions_after AND i.id <= (SELECT max(x.id) FROM impressions x)
          AND i.user_id IS NOT NULL
        ORDER BY i.user_id COLLATE "C", i.evaluated_at, i.id
    ) fi
    UNION ALL
    SELECT ge.user_id, NULL, NULL, max(ge.occurred_at)
    FROM tail_events ge
    WHERE ge.environment_id = @environment_id AND ge.event_key = @goal_event_key AND ge.user_id IS NOT NULL
    GROUP BY ge.user_id
), tail_users AS (
    SELECT t.user_id, max(t.at) AS at, max(t.value) AS value, max(t.goal_at) AS goal_at
    FROM tail t
    GROUP BY t.user_id
), users AS (
    -- Only the users the tail moves: an earlier (or a first) exposure, or
    -- a goal event at or after the first exposure they have. The others'
    -- part of the counts stays as it is, and their latest goal event is
    -- not looked up.
    SELECT tu.user_id, tu.at, tu.value, tu.goal_at, r.value_no AS old_value_no, r.first_at AS old_at, g.last_at AS old_goal_at,
           (tu.at IS NOT NULL AND (r.first_at IS NULL OR tu.at < r.first_at)) AS moved
    FROM tail_users tu
    LEFT JOIN LATERAL (
        SELECT y.value_no, y.first_at FROM impression_users y
        WHERE y.flag_no = (SELECT f.flag_no FROM flag f) AND y.user_id = tu.user_id AND y.first
        LIMIT 1
    ) r ON true
    LEFT JOIN LATERAL (
        SELECT x.last_at FROM goal_event_users x
        WHERE x.environment_id = @environment_id AND x.event_key = @goal_event_key AND x.user_id = tu.user_id
        LIMIT 1
    ) g ON true
    WHERE (tu.at IS NOT NULL AND (r.first_at IS NULL OR tu.at < r.first_at)) OR tu.goal_at >= r.first_at
), named AS (
    -- The value of each user's old arm, named once per user here rather
    -- than in each probe.
    SELECT u.*, mv.value AS old_value
    FROM users u
    LEFT JOIN measure_values mv ON mv.value_no = u.old_value_no
), moves AS (
    SELECT u.old_value AS value, -1 AS exposed, -(CASE WHEN u.old_goal_at >= u.old_at THEN 1 ELSE 0 END) AS converted
    FROM named u
    WHERE u.old_value IS NOT NULL
    UNION ALL
    SELECT CASE WHEN u.moved THEN u.value ELSE u.old_value END, 1,
           CASE WHEN greatest(u.old_goal_at, u.goal_at) >= CASE WHEN u.moved THEN u.at ELSE u.old_at END THEN 1 ELSE 0 END
    FROM named u
), counts AS (
    SELECT mv.value, c.exposed, c.converted
    FROM experiment_arm_counts c
    JOIN measure_values mv ON mv.value_no = c.value_no
    WHERE c.metric_no = (SELECT m.metric_no FROM metric m)
    UNION ALL
    SELECT mo.value, mo.exposed, mo.converted FROM moves mo
)
SELECT c.value AS variant, sum(c.exposed)::bigint AS exposed, sum(c.converted)::bigint AS converted
FROM counts c
GROUP BY c.value
HAVING sum(c.exposed) > 0
ORDER BY c.value;
