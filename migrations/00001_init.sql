-- Switchyard's whole data model (docs/reference/flags.md, Flag fields, and
-- docs/reference/identity.md, Projects and environments). Hierarchy: workspace (singleton) > projects > environments >
-- everything per environment. Deleting a parent cascades to its children.
--
-- Conventions:
--   * created_at/updated_at default to clock_timestamp(), not now(), so rows
--     created in one transaction (a project's three environments) keep their order.
--   * Constraints carry explicit names where server/store.AdaptError maps them to
--     a client message; keep the two in step.
--   * Keys of flags, segments and experiments follow the key rule of
--     docs/reference/limits.md, Keys and names: ASCII alphanumerics,
--     underscore, hyphen, 1 to 100 characters.

-- +goose Up

CREATE TABLE workspace (
    id         integer     PRIMARY KEY CHECK (id = 1),
    name       text        NOT NULL CONSTRAINT workspace_name_check CHECK (btrim(name) <> ''),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE users (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text        NOT NULL,
    email         text        NOT NULL CONSTRAINT users_email_check CHECK (btrim(email) <> ''),
    password_hash text        NOT NULL,
    role          text        NOT NULL CONSTRAINT users_role_check CHECK (role IN ('admin', 'editor', 'viewer')),
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- E-mail addresses are unique regardless of case; login looks them up by lower(email).
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- Server-side sessions (docs/reference/identity.md, Sessions): the cookie
-- seals the random id; logout and user deletion remove the row.
CREATE TABLE sessions (
    id         bytea       PRIMARY KEY CHECK (octet_length(id) >= 16),
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- Login failures per lowercased e-mail, whether or not an account exists
-- (docs/reference/identity.md, Login lockout), so responses never reveal
-- which addresses exist.
CREATE TABLE login_attempts (
    email             text        PRIMARY KEY CHECK (email = lower(email)),
    failures          integer     NOT NULL DEFAULT 0 CHECK (failures >= 0),
    window_started_at timestamptz NOT NULL,
    locked_until      timestamptz
);

CREATE TABLE projects (
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text        NOT NULL CONSTRAINT projects_name_check CHECK (btrim(name) <> ''),
    -- Lowercase ASCII, runs of other characters become one hyphen, trimmed
    -- (docs/reference/identity.md, Projects and environments).
    slug       text        NOT NULL CONSTRAINT projects_slug_check CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT projects_slug_key UNIQUE (slug)
);

CREATE TABLE project_members (
    project_id uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    bigint      NOT NULL CONSTRAINT project_members_user_id_fkey REFERENCES users (id) ON DELETE CASCADE,
    role       text        NOT NULL CONSTRAINT project_members_role_check CHECK (role IN ('admin', 'editor', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT project_members_pkey PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user_id_idx ON project_members (user_id);

CREATE TABLE environments (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id       uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name             text        NOT NULL CONSTRAINT environments_name_check
                                     CHECK (btrim(name) <> '' AND char_length(name) <= 100),
    slug             text        NOT NULL CONSTRAINT environments_slug_check
                                     CHECK (slug ~ '^[a-z0-9-]+$' AND char_length(slug) <= 64),
    color            text        NOT NULL DEFAULT '#6366f1' CONSTRAINT environments_color_check
                                     CHECK (color ~ '^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$'),
    is_default       boolean     NOT NULL DEFAULT false,
    require_approval boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT environments_project_id_slug_key UNIQUE (project_id, slug),
    -- Target of sdk_keys' composite foreign key: a key's environment must belong to its project.
    CONSTRAINT environments_id_project_id_key UNIQUE (id, project_id)
);
-- At most one default per project. "At least one" is kept by core, which moves
-- the flag in one transaction (clear the old default first, then set the new one).
CREATE UNIQUE INDEX environments_one_default_key ON environments (project_id) WHERE is_default;

CREATE TABLE sdk_keys (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id     uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment_id uuid        NOT NULL,
    name           text        NOT NULL,
    key_hash       bytea       NOT NULL CHECK (octet_length(key_hash) = 32),
    prefix         text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT sdk_keys_key_hash_key UNIQUE (key_hash),
    CONSTRAINT sdk_keys_environment_fkey FOREIGN KEY (environment_id, project_id)
        REFERENCES environments (id, project_id) ON DELETE CASCADE
);
CREATE INDEX sdk_keys_project_id_idx ON sdk_keys (project_id, id);
CREATE INDEX sdk_keys_environment_id_idx ON sdk_keys (environment_id);

CREATE TABLE personal_access_tokens (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    token_hash   bytea       NOT NULL CHECK (octet_length(token_hash) = 32),
    prefix       text        NOT NULL,
    scope        text        NOT NULL CONSTRAINT personal_access_tokens_scope_check
                                 CHECK (scope IN ('read_only', 'read_write')),
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_used_at timestamptz,
    expires_at   timestamptz,
    CONSTRAINT personal_access_tokens_token_hash_key UNIQUE (token_hash)
);
CREATE INDEX personal_access_tokens_user_id_idx ON personal_access_tokens (user_id, id);

CREATE TABLE flags (
    id                 bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id     uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    key                text        NOT NULL CONSTRAINT flags_key_check CHECK (key ~ '^[A-Za-z0-9_-]{1,100}$'),
    is_enabled         boolean     NOT NULL DEFAULT false,
    rollout_percentage integer     CONSTRAINT flags_rollout_percentage_check
                                       CHECK (rollout_percentage BETWEEN 0 AND 100),
    description        text,
    flag_type          text        NOT NULL DEFAULT 'boolean' CONSTRAINT flags_flag_type_check
                                       CHECK (flag_type IN ('boolean', 'string', 'integer', 'json')),
    default_value      jsonb,
    disabled_value     jsonb,
    rules              jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(rules) = 'array'),
    variants           jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(variants) = 'array'),
    prerequisites      jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(prerequisites) = 'array'),
    tags               text[]      NOT NULL DEFAULT '{}',
    owner_email        text,
    archived_at        timestamptz,
    -- 1 on creation, +1 on every write of any kind (docs/reference/flags.md, Version).
    version            bigint      NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT flags_environment_id_key_key UNIQUE (environment_id, key)
);

CREATE TABLE segments (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    key            text        NOT NULL CONSTRAINT segments_key_check CHECK (key ~ '^[A-Za-z0-9_-]{1,100}$'),
    name           text        NOT NULL CONSTRAINT segments_name_check CHECK (btrim(name) <> ''),
    description    text,
    rules          jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(rules) = 'array'),
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT segments_environment_id_key_key UNIQUE (environment_id, key)
);

-- Append-only per environment. flag_key is plain text, not a foreign key, so the
-- history of a deleted flag stays.
CREATE TABLE audit_entries (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text        NOT NULL,
    actor_email    text        NOT NULL,
    action         text        NOT NULL CONSTRAINT audit_entries_action_check CHECK (action IN
                                   ('create', 'replace', 'update', 'delete', 'promote', 'archive', 'unarchive')),
    before_data    jsonb,
    after_data     jsonb,
    metadata       jsonb,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX audit_entries_environment_id_idx ON audit_entries (environment_id, id DESC);
CREATE INDEX audit_entries_environment_id_flag_key_idx ON audit_entries (environment_id, flag_key, id DESC);

-- audit_entries_append_only refuses UPDATE, and DELETE except when the delete is
-- the ON DELETE CASCADE of the entry's environment (or of its project). The
-- cascade runs after the environment row is gone, so "the environment no longer
-- exists" tells a cascade from a direct DELETE.
-- +goose StatementBegin
CREATE FUNCTION audit_entries_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM environments WHERE id = OLD.environment_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit entries are append-only (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_entries_append_only
    BEFORE UPDATE OR DELETE ON audit_entries
    FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only();

CREATE TABLE impressions (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text        NOT NULL CHECK (flag_key <> ''),
    user_id        text,
    value          text        NOT NULL,
    context        jsonb,
    evaluated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- Lists are newest first by id; filters by flag and by flag + user.
CREATE INDEX impressions_environment_id_idx ON impressions (environment_id, id DESC);
CREATE INDEX impressions_environment_id_flag_key_idx ON impressions (environment_id, flag_key, id DESC);
CREATE INDEX impressions_environment_id_flag_key_user_id_idx
    ON impressions (environment_id, flag_key, user_id, evaluated_at);

CREATE TABLE goal_events (
    id             bigint           GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id uuid             NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    -- Max 100 chars; rows with an empty or over-long key are skipped before insert
    -- (docs/reference/measurement.md, Goal events).
    event_key      text             NOT NULL CHECK (char_length(event_key) BETWEEN 1 AND 100),
    user_id        text,
    value          double precision,
    context        jsonb,
    occurred_at    timestamptz      NOT NULL,
    received_at    timestamptz      NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX goal_events_environment_id_event_key_idx
    ON goal_events (environment_id, event_key, user_id, occurred_at);

CREATE TABLE experiments (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id  uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    key             text        NOT NULL CONSTRAINT experiments_key_check CHECK (key ~ '^[A-Za-z0-9_-]{1,100}$'),
    name            text        NOT NULL CONSTRAINT experiments_name_check CHECK (btrim(name) <> ''),
    description     text,
    flag_key        text        NOT NULL CONSTRAINT experiments_flag_key_check
                                    CHECK (flag_key ~ '^[A-Za-z0-9_-]{1,100}$'),
    goal_event_key  text        NOT NULL CONSTRAINT experiments_goal_event_key_check
                                    CHECK (goal_event_key ~ '^[A-Za-z0-9_-]{1,100}$'),
    control_variant text,
    status          text        NOT NULL DEFAULT 'running' CONSTRAINT experiments_status_check
                                    CHECK (status IN ('running', 'paused', 'completed')),
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT experiments_environment_id_key_key UNIQUE (environment_id, key)
);

CREATE TABLE change_requests (
    id                   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id       uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key             text        NOT NULL,
    patch                jsonb       NOT NULL CHECK (jsonb_typeof(patch) = 'object'),
    requested_by         text        NOT NULL,
    -- Who may approve or cancel is decided by user id; the e-mail is what the API shows.
    requested_by_user_id bigint      REFERENCES users (id) ON DELETE SET NULL,
    status               text        NOT NULL DEFAULT 'pending' CONSTRAINT change_requests_status_check
                                         CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
    reviewed_by          text,
    reason               text,
    created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    reviewed_at          timestamptz
);
CREATE INDEX change_requests_environment_id_status_idx ON change_requests (environment_id, status, id DESC);
CREATE INDEX change_requests_requested_by_user_id_idx ON change_requests (requested_by_user_id)
    WHERE requested_by_user_id IS NOT NULL;

CREATE TABLE scheduled_changes (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id  uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key        text        NOT NULL,
    scheduled_at    timestamptz NOT NULL,
    patch           jsonb       NOT NULL CHECK (jsonb_typeof(patch) = 'object'),
    executed_at     timestamptz,
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error      text,
    -- The worker's due time: scheduled_at on insert, pushed back after a failure
    -- (docs/reference/flags.md, Scheduled changes: retried no earlier than 60
    -- seconds after a failure).
    next_attempt_at timestamptz NOT NULL,
    created_by      text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX scheduled_changes_environment_id_idx ON scheduled_changes (environment_id, scheduled_at);
CREATE INDEX scheduled_changes_environment_id_flag_key_idx
    ON scheduled_changes (environment_id, flag_key, scheduled_at);
CREATE INDEX scheduled_changes_due_idx ON scheduled_changes (next_attempt_at) WHERE executed_at IS NULL;

CREATE TABLE webhooks (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name           text        NOT NULL CONSTRAINT webhooks_name_check CHECK (btrim(name) <> ''),
    url            text        NOT NULL CONSTRAINT webhooks_url_check CHECK (btrim(url) <> ''),
    secret         text,
    enabled        boolean     NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhooks_environment_id_idx ON webhooks (environment_id);

CREATE TABLE webhook_deliveries (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id    uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event         text        NOT NULL,
    status_code   integer,
    response_body text,
    error         text,
    delivered_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_deliveries_webhook_id_idx ON webhook_deliveries (webhook_id, id DESC);

CREATE TABLE chat_integrations (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    kind           text        NOT NULL CONSTRAINT chat_integrations_kind_check CHECK (kind IN ('slack', 'teams')),
    name           text        NOT NULL,
    webhook_url    text        NOT NULL CONSTRAINT chat_integrations_webhook_url_check CHECK (btrim(webhook_url) <> ''),
    -- Empty means every event (docs/reference/notifications.md, Events).
    events         text[]      NOT NULL DEFAULT '{}' CONSTRAINT chat_integrations_events_check CHECK (events <@ ARRAY[
                                   'flag.created', 'flag.updated', 'flag.deleted', 'flag.promoted',
                                   'change_request.opened', 'change_request.approved', 'change_request.rejected'
                               ]::text[]),
    enabled        boolean     NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX chat_integrations_environment_id_idx ON chat_integrations (environment_id);

CREATE TABLE chat_deliveries (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    integration_id uuid        NOT NULL REFERENCES chat_integrations (id) ON DELETE CASCADE,
    event          text        NOT NULL,
    status_code    integer,
    response_body  text,
    error          text,
    delivered_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX chat_deliveries_integration_id_idx ON chat_deliveries (integration_id, id DESC);

-- +goose Down

DROP TABLE chat_deliveries;
DROP TABLE chat_integrations;
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
DROP TABLE scheduled_changes;
DROP TABLE change_requests;
DROP TABLE experiments;
DROP TABLE goal_events;
DROP TABLE impressions;
DROP TABLE audit_entries;
DROP FUNCTION audit_entries_append_only();
DROP TABLE segments;
DROP TABLE flags;
DROP TABLE personal_access_tokens;
DROP TABLE sdk_keys;
DROP TABLE environments;
DROP TABLE project_members;
DROP TABLE projects;
DROP TABLE login_attempts;
DROP TABLE sessions;
DROP TABLE users;
DROP TABLE workspace;
