-- Measurement rollups (docs/performance.md, "Measurement: design and
-- `bench/ingest`").
--
-- Statistics over millions of raw impressions cannot be computed by scanning
-- within the one-second budget, so ingest maintains these tables in the same
-- transaction as the COPY of the raw rows: every read sees raw rows and
-- rollups that agree. Retention (server/measure/retention.go) purges raw rows
-- before a UTC midnight and keeps these tables in step:
--   * impression_daily and goal_event_keys are exact per UTC day / key;
--   * first-exposure rows older than the cutoff are recomputed from the raw
--     rows that remain, or deleted with their counters adjusted.

-- +goose Up

-- Impressions per flag, UTC day and rendered value: stats (total, true and
-- false counts, last seen), exposure variants and timeline, list totals.
CREATE TABLE impression_daily (
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text        NOT NULL,
    day            date        NOT NULL,
    value          text        NOT NULL,
    impressions    bigint      NOT NULL CHECK (impressions >= 0),
    last_seen      timestamptz NOT NULL
);
-- Values may be up to 10,000 characters, beyond what a btree entry holds:
-- keys that include the value use its MD5 digest.
CREATE UNIQUE INDEX impression_daily_key ON impression_daily (environment_id, flag_key, day, md5(value));

-- First exposure of each identified user to each flag
-- (docs/reference/measurement.md, Attribution): the value of the user's earliest impression,
-- ties broken by ingest order.
CREATE TABLE impression_exposures (
    environment_id uuid        NOT NULL, -- no foreign key: see the trigger below
    flag_key       text        NOT NULL,
    user_id        text        NOT NULL,
    value          text        NOT NULL,
    first_at       timestamptz NOT NULL,
    PRIMARY KEY (environment_id, flag_key, user_id)
);

-- Distinct identified users per flag (stats unique_users, exposure
-- total_users): the number of impression_exposures rows of the flag, kept as
-- a counter because counting millions of rows per request is too slow.
CREATE TABLE impression_flag_users (
    environment_id uuid   NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text   NOT NULL,
    users          bigint NOT NULL,
    PRIMARY KEY (environment_id, flag_key)
);

-- Distinct identified users per flag and value (exposure variants'
-- unique_users), with the first time the user saw that value.
CREATE TABLE impression_variant_users (
    environment_id uuid        NOT NULL, -- no foreign key: see the trigger below
    flag_key       text        NOT NULL,
    value          text        NOT NULL,
    user_id        text        NOT NULL,
    first_at       timestamptz NOT NULL
);
CREATE UNIQUE INDEX impression_variant_users_key ON impression_variant_users (environment_id, flag_key, md5(value), user_id);

-- Event key summary: totals, distinct users, last occurrence.
CREATE TABLE goal_event_keys (
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    event_key      text        NOT NULL,
    total          bigint      NOT NULL,
    unique_users   bigint      NOT NULL,
    last_seen      timestamptz NOT NULL,
    PRIMARY KEY (environment_id, event_key)
);

-- Latest occurrence of each event key per identified user. A user converted
-- when some goal event occurred at or after their first exposure, which is
-- exactly when the latest one did.
CREATE TABLE goal_event_users (
    environment_id uuid        NOT NULL, -- no foreign key: see the trigger below
    event_key      text        NOT NULL,
    user_id        text        NOT NULL,
    last_at        timestamptz NOT NULL,
    PRIMARY KEY (environment_id, event_key, user_id)
);

-- The three tables above take one row per user and flag (or key) at ingest;
-- a foreign key would add a referential check per row to every batch, so
-- they have none and this trigger does what ON DELETE CASCADE would.
-- +goose StatementBegin
CREATE FUNCTION measurement_rollups_delete_environment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM impression_exposures WHERE environment_id = OLD.id;
    DELETE FROM impression_variant_users WHERE environment_id = OLD.id;
    DELETE FROM goal_event_users WHERE environment_id = OLD.id;
    RETURN OLD;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER environments_delete_measurement_rollups
    AFTER DELETE ON environments
    FOR EACH ROW EXECUTE FUNCTION measurement_rollups_delete_environment();

-- +goose Down
DROP TRIGGER environments_delete_measurement_rollups ON environments;
DROP FUNCTION measurement_rollups_delete_environment();
DROP TABLE goal_event_users;
DROP TABLE goal_event_keys;
DROP TABLE impression_variant_users;
DROP TABLE impression_flag_users;
DROP TABLE impression_exposures;
DROP TABLE impression_daily;
