-- name: InsertRelease :one
INSERT INTO releases (
    environment_id, flag_key, status, stages, stage_index, stage_started_at, metrics, alpha,
    min_users, check_interval_seconds, previous_rollout_percentage, created_by, created_by_actor,
    started_at, next_check_at, impressions_through, events_through
) VALUES (
    @environment_id, @flag_key, 'running', @stages, 0, @started_at, @metrics, @alpha,
    @min_users, @check_interval_seconds, @previous_rollout_percentage, @created_by, @created_by_actor,
    @started_at, @next_check_at, @impressions_through, @events_through
)
RETURNING *;

-- name: InsertReleaseArmMetrics :exec
INSERT INTO release_arm_metrics (release_id, treatment, metric)
SELECT @release_id, arm, m
FROM unnest(ARRAY[true, false]) AS arm, generate_series(1, @metric_count::integer) AS m;

-- name: GetRelease :one
SELECT * FROM releases WHERE id = @id AND environment_id = @environment_id;

-- name: LockRelease :one
SELECT * FROM releases WHERE id = @id AND environment_id = @environment_id FOR UPDATE;

-- name: LockActiveReleases :many
-- The running or paused release of a flag, locked before the flag itself:
-- every path that writes both (checks, manual actions, a person's flag
-- write) takes them in this order, so none can deadlock another.
SELECT * FROM releases
WHERE environment_id = @environment_id AND flag_key = @flag_key AND status IN ('running', 'paused')
FOR UPDATE;

-- name: ListReleases :many
-- Newest first; status and flag_key filter when given.
SELECT * FROM releases
WHERE environment_id = @environment_id
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
  AND (sqlc.narg(flag_key)::text IS NULL OR flag_key = sqlc.narg(flag_key))
ORDER BY created_at DESC, id;

-- name: ListActiveReleaseFlagKeys :many
SELECT flag_key FROM releases
WHERE environment_id = @environment_id AND status IN ('running', 'paused');

-- name: ListReleaseChecks :many
SELECT analysis FROM release_checks WHERE release_id = @release_id ORDER BY id;

-- name: HasDueRelease :one
-- Whether any check is due, read before the ingest barrier so that an idle
-- guard never makes ingest wait.
SELECT EXISTS (SELECT 1 FROM releases WHERE status IN ('running', 'paused') AND next_check_at <= @now);

-- name: ClaimDueRelease :one
-- One release whose check is due. SKIP LOCKED lets several instances run
-- checks at once, each release claimed by exactly one of them; the claim
-- holds until the check commits, so a check is never run twice.
SELECT * FROM releases
WHERE status IN ('running', 'paused') AND next_check_at <= @now
ORDER BY next_check_at, id
LIMIT 1
FOR UPDATE SKIP LOCKED;

-- name: UpdateReleaseState :one
UPDATE releases SET
    status = @status,
    stage_index = @stage_index,
    stage_started_at = @stage_started_at,
    reason = @reason,
    ended_at = @ended_at,
    next_check_at = @next_check_at,
    stage_treatment_users = @stage_treatment_users,
    stage_control_users = @stage_control_users,
    updated_at = @now
WHERE id = @id
RETURNING *;

-- name: RecordReleaseCheck :one
UPDATE releases SET
    analysis = @analysis,
    impressions_through = @impressions_through,
    events_through = @events_through,
    treatment_users = @treatment_users,
    control_users = @control_users,
    stage_treatment_users = @stage_treatment_users,
    stage_control_users = @stage_control_users,
    updated_at = @now
WHERE id = @id
RETURNING *;

-- name: InsertReleaseCheck :exec
INSERT INTO release_checks (release_id, checked_at, analysis) VALUES (@release_id, @checked_at, @analysis);

-- name: FoldReleaseEvents :exec
-- Folds the goal events of (after_id, through_id] into the users the
-- release already knows: each metric's per-user count and total, and the
-- arms' running sums by the change of each user's value. An event counts
-- when it is at or after the user's first exposure. Each event of a metric
-- looks its user up, and each (user, metric) its state, with one
-- primary-key probe (LIMIT keeps the planner from hash-joining the
-- release's users or metric rows whole), so the cost follows the events in
-- the range, not the release's size.
WITH ev AS (
    SELECT ru.user_id, ru.treatment, m.metric::integer AS metric,
           count(*)::bigint AS n, sum(coalesce(g.value, 1))::double precision AS s
    FROM goal_events g
    JOIN unnest(@event_keys::text[]) WITH ORDINALITY AS m (event_key, metric) ON m.event_key = g.event_key
    CROSS JOIN LATERAL (
        SELECT ru.user_id, ru.treatment, ru.exposed_at FROM release_users ru
        WHERE ru.release_id = @release_id AND ru.user_id = g.user_id
        LIMIT 1
    ) ru
    WHERE g.id > @after_id AND g.id <= @through_id AND g.environment_id = @environment_id
      AND g.occurred_at >= ru.exposed_at
    GROUP BY ru.user_id, ru.treatment, m.metric
), prior AS (
    SELECT ev.user_id, ev.treatment, ev.metric, ev.n, ev.s,
           coalesce(rum.events, 0)::bigint AS old_n, coalesce(rum.total, 0)::double precision AS old_s
    FROM ev
    LEFT JOIN LATERAL (
        SELECT rum.events, rum.total FROM release_user_metrics rum
        WHERE rum.release_id = @release_id AND rum.user_id = ev.user_id AND rum.metric = ev.metric
        LIMIT 1
    ) rum ON true
), stored AS (
    INSERT INTO release_user_metrics (release_id, user_id, metric, events, total)
    SELECT @release_id, user_id, metric, old_n + n, old_s + s FROM prior
    ON CONFLICT (release_id, user_id, metric)
    DO UPDATE SET events = excluded.events, total = excluded.total
)
UPDATE release_arm_metrics a SET
    converted = a.converted + d.converted,
    total = a.total + d.total,
    total_sq = a.total_sq + d.total_sq
FROM (
    SELECT treatment, metric,
           count(*) FILTER (WHERE old_n = 0)::bigint AS converted,
           sum(s)::double precision AS total,
           sum((old_s + s) * (old_s + s) - old_s * old_s)::double precision AS total_sq
    FROM prior GROUP BY treatment, metric
) d
WHERE a.release_id = @release_id AND a.treatment = d.treatment AND a.metric = d.metric;

-- name: ListReleaseExposureChanges :many
-- The first exposures in the impressions of (after_id, through_id] that
-- the release does not know yet, or that are earlier than the one it knows
-- (ingest may deliver an earlier impression later): a user's first
-- impression of the flag at or after the start, true or false. known looks
-- each of these users up with one primary-key probe (LIMIT keeps the planner
-- from making it a hash join over all the release's users), so the cost
-- follows the users in the range, not the release's size.
WITH firsts AS (
    SELECT DISTINCT ON (i.user_id) i.user_id, i.value = 'true' AS treatment, i.evaluated_at
    FROM impressions i
    WHERE i.environment_id = @environment_id AND i.flag_key = @flag_key
      AND i.id > @after_id AND i.id <= @through_id
      AND i.user_id IS NOT NULL AND i.evaluated_at >= @started_at AND i.value IN ('true', 'false')
    ORDER BY i.user_id, i.evaluated_at, i.id
), known AS (
    SELECT ru.user_id, ru.treatment, ru.exposed_at
    FROM firsts f
    CROSS JOIN LATERAL (
        SELECT ru.user_id, ru.treatment, ru.exposed_at FROM release_users ru
        WHERE ru.release_id = @release_id AND ru.user_id = f.user_id
        LIMIT 1
    ) ru
)
SELECT f.user_id::text AS user_id, f.treatment::boolean AS treatment, f.evaluated_at,
       k.treatment AS old_treatment, k.exposed_at AS old_exposed_at
FROM firsts f
LEFT JOIN known k ON k.user_id = f.user_id
WHERE k.user_id IS NULL OR f.evaluated_at < k.exposed_at;

-- name: RemoveReleaseUserMetrics :exec
-- Takes users' metric state out of their arms' sums (their first exposure
-- moved earlier, so it is computed again).
WITH gone AS (
    DELETE FROM release_user_metrics rum
    WHERE rum.release_id = @release_id AND rum.user_id = ANY(@user_ids::text[])
    RETURNING rum.user_id, rum.metric, rum.events, rum.total
)
UPDATE release_arm_metrics a SET
    converted = a.converted - d.converted,
    total = a.total - d.total,
    total_sq = a.total_sq - d.total_sq
FROM (
    SELECT ru.treatment, gone.metric,
           count(*) FILTER (WHERE gone.events > 0)::bigint AS converted,
           sum(gone.total)::double precision AS total,
           sum(gone.total * gone.total)::double precision AS total_sq
    FROM gone
    JOIN release_users ru ON ru.release_id = @release_id AND ru.user_id = gone.user_id
    GROUP BY ru.treatment, gone.metric
) d
WHERE a.release_id = @release_id AND a.treatment = d.treatment AND a.metric = d.metric;

-- name: UpsertReleaseUsers :exec
-- The three arrays are zipped: unnest in a select list walks them together.
INSERT INTO release_users (release_id, user_id, treatment, exposed_at)
SELECT @release_id, unnest(@user_ids::text[]), unnest(@treatments::boolean[]), unnest(@exposed_ats::timestamptz[])
ON CONFLICT (release_id, user_id)
DO UPDATE SET treatment = excluded.treatment, exposed_at = excluded.exposed_at;

-- name: AddReleaseUserMetrics :exec
-- Computes new users' metric state from every goal event through
-- through_id at or after their first exposure, and adds it to their arms'
-- sums. The users come with the arm and exposure just stored for them
-- (UpsertReleaseUsers; the arrays are zipped, one entry per user), and
-- each metric of each user is one probe of
-- goal_events_environment_id_event_key_idx (an aggregate in LATERAL is
-- never flattened into a join), so the cost follows the new users, not the
-- goal events stored.
WITH ev AS (
    SELECT u.user_id, u.treatment, m.metric::integer AS metric, g.n, g.s
    FROM (SELECT unnest(@user_ids::text[]) AS user_id, unnest(@treatments::boolean[]) AS treatment,
                 unnest(@exposed_ats::timestamptz[]) AS exposed_at) u
    CROSS JOIN unnest(@event_keys::text[]) WITH ORDINALITY AS m (event_key, metric)
    CROSS JOIN LATERAL (
        SELECT count(*)::bigint AS n, sum(coalesce(g.value, 1))::double precision AS s
        FROM goal_events g
        WHERE g.environment_id = @environment_id AND g.event_key = m.event_key AND g.user_id = u.user_id
          AND g.occurred_at >= u.exposed_at AND g.id <= @through_id
    ) g
    WHERE g.n > 0
), stored AS (
    INSERT INTO release_user_metrics (release_id, user_id, metric, events, total)
    SELECT @release_id, user_id, metric, n, s FROM ev
)
UPDATE release_arm_metrics a SET
    converted = a.converted + d.converted,
    total = a.total + d.total,
    total_sq = a.total_sq + d.total_sq
FROM (
    SELECT treatment, metric, count(*)::bigint AS converted,
           sum(s)::double precision AS total, sum(s * s)::double precision AS total_sq
    FROM ev GROUP BY treatment, metric
) d
WHERE a.release_id = @release_id AND a.treatment = d.treatment AND a.metric = d.metric;

-- name: ListReleaseArmMetrics :many
SELECT * FROM release_arm_metrics WHERE release_id = @release_id ORDER BY metric, treatment DESC;

-- name: CountReleaseStageUsers :one
-- Users per arm whose first exposure is at or after a new stage's start.
SELECT count(*) FILTER (WHERE treatment)::bigint AS treatment,
       count(*) FILTER (WHERE NOT treatment)::bigint AS control
FROM release_users WHERE release_id = @release_id AND exposed_at >= @since;
