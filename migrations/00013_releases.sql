-- Guarded releases (docs/releases.md): a boolean flag ramps through stages
-- of rollout percentage while a background check compares the users who got
-- the change with those who did not, and rolls the flag back when a metric
-- regresses.
--
-- A check never rescans a release's users: each one folds the impressions
-- and goal events ingested since the previous check into per-user state
-- (release_users, release_user_metrics) and per-arm running sums
-- (release_arm_metrics, the user counters on releases), so its cost follows
-- what arrived since, not how many users the release has.
-- +goose Up
CREATE TABLE releases (
    id                          uuid             PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id              uuid             NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key                    text             NOT NULL,
    status                      text             NOT NULL
        CHECK (status IN ('running', 'paused', 'completed', 'rolled_back', 'cancelled')),
    stages                      jsonb            NOT NULL,
    stage_index                 integer          NOT NULL DEFAULT 0,
    stage_started_at            timestamptz      NOT NULL,
    metrics                     jsonb            NOT NULL,
    alpha                       double precision NOT NULL,
    min_users                   integer          NOT NULL,
    check_interval_seconds      integer          NOT NULL,
    previous_rollout_percentage integer,
    reason                      text,
    -- The user who started it (null for an SDK key), and the actor its flag
    -- writes and audit entries are attributed to.
    created_by                  bigint           REFERENCES users (id) ON DELETE SET NULL,
    created_by_actor            text             NOT NULL,
    started_at                  timestamptz      NOT NULL,
    ended_at                    timestamptz,
    analysis                    jsonb,
    next_check_at               timestamptz      NOT NULL,
    -- Fold state: the raw rows folded so far, users per arm, and users per
    -- arm whose first exposure falls in the current stage.
    impressions_through         bigint           NOT NULL DEFAULT 0,
    events_through              bigint           NOT NULL DEFAULT 0,
    treatment_users             bigint           NOT NULL DEFAULT 0,
    control_users               bigint           NOT NULL DEFAULT 0,
    stage_treatment_users       bigint           NOT NULL DEFAULT 0,
    stage_control_users         bigint           NOT NULL DEFAULT 0,
    created_at                  timestamptz      NOT NULL DEFAULT now(),
    updated_at                  timestamptz      NOT NULL DEFAULT now()
);
-- At most one running or paused release per flag.
CREATE UNIQUE INDEX releases_active_flag_key ON releases (environment_id, flag_key)
    WHERE status IN ('running', 'paused');
CREATE INDEX releases_environment_id_idx ON releases (environment_id, created_at DESC);
CREATE INDEX releases_due_idx ON releases (next_check_at) WHERE status IN ('running', 'paused');

-- Every check's analysis, oldest first: the history a chart draws.
CREATE TABLE release_checks (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    release_id uuid        NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    checked_at timestamptz NOT NULL,
    analysis   jsonb       NOT NULL
);
CREATE INDEX release_checks_release_id_idx ON release_checks (release_id, id);

-- Each user's arm: the value of their first impression of the flag at or
-- after the release started.
CREATE TABLE release_users (
    release_id uuid        NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    user_id    text        NOT NULL,
    treatment  boolean     NOT NULL,
    exposed_at timestamptz NOT NULL,
    PRIMARY KEY (release_id, user_id)
);

-- Each user's goal events of one metric (its index in releases.metrics,
-- from 1) at or after their first exposure: how many, and the sum of their
-- values with a null value counting 1.
CREATE TABLE release_user_metrics (
    release_id uuid             NOT NULL,
    user_id    text             NOT NULL,
    metric     integer          NOT NULL,
    events     bigint           NOT NULL,
    total      double precision NOT NULL,
    PRIMARY KEY (release_id, user_id, metric),
    FOREIGN KEY (release_id, user_id) REFERENCES release_users (release_id, user_id) ON DELETE CASCADE
);

-- Running sums per arm and metric over the arm's users: users with at least
-- one event, the sum of the per-user totals, and the sum of their squares.
CREATE TABLE release_arm_metrics (
    release_id uuid             NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    treatment  boolean          NOT NULL,
    metric     integer          NOT NULL,
    converted  bigint           NOT NULL DEFAULT 0,
    total      double precision NOT NULL DEFAULT 0,
    total_sq   double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (release_id, treatment, metric)
);

-- The audit log records the release events, and chat integrations may
-- select them (docs/releases.md, Events and audit).
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_action_check;
ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_action_check CHECK (action IN (
    'create', 'replace', 'update', 'delete', 'promote', 'archive', 'unarchive',
    'release.started', 'release.advanced', 'release.paused', 'release.resumed',
    'release.rolled_back', 'release.completed', 'release.cancelled'
));

ALTER TABLE chat_integrations DROP CONSTRAINT chat_integrations_events_check;
ALTER TABLE chat_integrations ADD CONSTRAINT chat_integrations_events_check CHECK (events <@ ARRAY[
    'flag.created', 'flag.updated', 'flag.deleted', 'flag.promoted',
    'change_request.opened', 'change_request.approved', 'change_request.rejected',
    'release.started', 'release.advanced', 'release.paused', 'release.resumed',
    'release.rolled_back', 'release.completed', 'release.cancelled'
]::text[]);

-- +goose Down
-- The release events leave event selections (an integration left with none
-- of its events is disabled rather than widened to every event). The
-- releases' audit entries stay, since the log is append-only: the narrower
-- check applies to new rows only.
UPDATE chat_integrations
SET enabled = enabled AND EXISTS (SELECT 1 FROM unnest(events) e WHERE e NOT LIKE 'release.%'),
    events = ARRAY(SELECT e FROM unnest(events) e WHERE e NOT LIKE 'release.%')
WHERE EXISTS (SELECT 1 FROM unnest(events) e WHERE e LIKE 'release.%');

ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_action_check;
ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_action_check CHECK (action IN
    ('create', 'replace', 'update', 'delete', 'promote', 'archive', 'unarchive')) NOT VALID;

ALTER TABLE chat_integrations DROP CONSTRAINT chat_integrations_events_check;
ALTER TABLE chat_integrations ADD CONSTRAINT chat_integrations_events_check CHECK (events <@ ARRAY[
    'flag.created', 'flag.updated', 'flag.deleted', 'flag.promoted',
    'change_request.opened', 'change_request.approved', 'change_request.rejected'
]::text[]);

DROP TABLE release_arm_metrics;
DROP TABLE release_user_metrics;
DROP TABLE release_users;
DROP TABLE release_checks;
DROP TABLE releases;
