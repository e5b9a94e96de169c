-- One per-user rollup instead of two, keyed by small integers
-- (docs/architecture.md, Measurement; docs/performance.md).
--
-- impression_exposures (a user's first exposure to a flag) and
-- impression_variant_users (the users of each value) both began with
-- (environment, flag, user): every new (flag, user) wrote a random place in
-- two wide indexes (a uuid, the flag key, an MD5 digest of the value as
-- text, the user), and the fold's upserts locked and dirtied every row they
-- met, changed or not. impression_users holds one row per identified
-- (flag, user, value): when the user first got that value, with the id of
-- that impression to break ties of time. A user's first exposure to a flag
-- is the earliest (first_at, first_id) of their rows, exactly the earliest
-- impression by time and then ingest order, as before; that row is marked
-- first, so that experiment results read the flag's marked rows instead of
-- sorting all of them.
--
-- Its key is (flag_no, user_id, value_no): measure_flags numbers each
-- environment's flag keys and measure_values each flag's values, so an
-- index entry carries two integers and the user instead of a uuid, a key,
-- a digest and the user. The counters that were impression_flag_users and
-- impression_value_users live on those two tables (users: the distinct
-- users of the flag, and of the value).
--
-- The fold (queries/impressions.sql, FoldImpressions) numbers new keys and
-- values first, then looks each (flag, user) of a range up once, inserts
-- the rows it does not find and updates only those the range has an
-- earlier impression of; it never locks a row it does not change.
--
-- The raw table's index on (environment, flag, user, time) did the same job
-- a third time and was the largest index that every raw row wrote at a
-- random place (about 80 bytes a row, no two entries alike). The reads that
-- look raw rows up by user (the impression list filtered by user, its total,
-- retention finding a user's earliest remaining impression) only need to
-- find a user's rows: an index on user_id alone serves them, and keeps one
-- entry per user with the rows' addresses in a list (deduplication), a
-- tenth of the size, so ingest writes far fewer pages.
--
-- The upgrade carries every statistic over: the rows of
-- impression_variant_users, each with the id of its earliest impression
-- (the raw rows are still there: retention keeps the rollups to them), and
-- the counters recounted from the rows.

-- +goose Up
CREATE TABLE measure_flags (
    flag_no        integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id uuid    NOT NULL, -- no foreign key: the environment trigger below clears it
    flag_key       text    NOT NULL,
    users          bigint  NOT NULL DEFAULT 0 CHECK (users >= 0),
    UNIQUE (environment_id, flag_key)
);

CREATE TABLE measure_values (
    value_no integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    flag_no  integer NOT NULL,
    value    text    NOT NULL,
    users    bigint  NOT NULL DEFAULT 0 CHECK (users >= 0)
);
-- Values may be up to 10,000 characters, beyond what a btree entry holds.
CREATE UNIQUE INDEX measure_values_key ON measure_values (flag_no, md5(value));

CREATE TABLE impression_users (
    flag_no  integer     NOT NULL,
    user_id  text        NOT NULL,
    value_no integer     NOT NULL,
    first_at timestamptz NOT NULL,
    first_id bigint      NOT NULL,
    -- the user's first exposure to the flag: exactly one row of each user,
    -- the earliest (first_at, first_id)
    first    boolean     NOT NULL,
    PRIMARY KEY (flag_no, user_id, value_no)
);

INSERT INTO measure_flags (environment_id, flag_key)
SELECT DISTINCT v.environment_id, v.flag_key
FROM impression_variant_users v
WHERE EXISTS (SELECT 1 FROM environments e WHERE e.id = v.environment_id)
ORDER BY 1, 2;

INSERT INTO measure_values (flag_no, value)
SELECT DISTINCT f.flag_no, v.value
FROM impression_variant_users v
JOIN measure_flags f ON f.environment_id = v.environment_id AND f.flag_key = v.flag_key
ORDER BY 1, 2;

INSERT INTO impression_users (flag_no, user_id, value_no, first_at, first_id, first)
SELECT f.flag_no, v.user_id, mv.value_no, v.first_at,
       coalesce((SELECT min(i.id) FROM impressions i
                 WHERE i.environment_id = v.environment_id AND i.flag_key = v.flag_key
                   AND i.user_id = v.user_id AND i.evaluated_at = v.first_at AND i.value = v.value), 0),
       false
FROM impression_variant_users v
JOIN measure_flags f ON f.environment_id = v.environment_id AND f.flag_key = v.flag_key
JOIN measure_values mv ON mv.flag_no = f.flag_no AND md5(mv.value) = md5(v.value) AND mv.value = v.value;

UPDATE impression_users u SET first = true
FROM (SELECT DISTINCT ON (flag_no, user_id) flag_no, user_id, value_no
      FROM impression_users
      ORDER BY flag_no, user_id, first_at, first_id) e
WHERE u.flag_no = e.flag_no AND u.user_id = e.user_id AND u.value_no = e.value_no;

UPDATE measure_flags f SET users = c.n
FROM (SELECT flag_no, count(DISTINCT user_id) AS n FROM impression_users GROUP BY flag_no) c
WHERE f.flag_no = c.flag_no;

UPDATE measure_values v SET users = c.n
FROM (SELECT value_no, count(*) AS n FROM impression_users GROUP BY value_no) c
WHERE v.value_no = c.value_no;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION measurement_rollups_delete_environment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM impressions WHERE environment_id = OLD.id;
    DELETE FROM goal_events WHERE environment_id = OLD.id;
    DELETE FROM impression_summaries WHERE environment_id = OLD.id;
    DELETE FROM impression_users WHERE flag_no IN (SELECT flag_no FROM measure_flags WHERE environment_id = OLD.id);
    DELETE FROM measure_values WHERE flag_no IN (SELECT flag_no FROM measure_flags WHERE environment_id = OLD.id);
    DELETE FROM measure_flags WHERE environment_id = OLD.id;
    DELETE FROM goal_event_users WHERE environment_id = OLD.id;
    RETURN OLD;
END
$$;
-- +goose StatementEnd

DROP TABLE impression_exposures;
DROP TABLE impression_variant_users;
DROP TABLE impression_flag_users;
DROP TABLE impression_value_users;

DROP INDEX impressions_environment_id_flag_key_user_id_idx;
CREATE INDEX impressions_user_id_idx ON impressions (user_id);

-- +goose Down
DROP INDEX impressions_user_id_idx;
CREATE INDEX impressions_environment_id_flag_key_user_id_idx
    ON impressions (environment_id, flag_key, user_id, evaluated_at);

CREATE TABLE impression_exposures (
    environment_id uuid        NOT NULL,
    flag_key       text        NOT NULL,
    user_id        text        NOT NULL,
    value          text        NOT NULL,
    first_at       timestamptz NOT NULL,
    PRIMARY KEY (environment_id, flag_key, user_id)
);
CREATE TABLE impression_flag_users (
    environment_id uuid   NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text   NOT NULL,
    users          bigint NOT NULL,
    PRIMARY KEY (environment_id, flag_key)
);
CREATE TABLE impression_variant_users (
    environment_id uuid        NOT NULL,
    flag_key       text        NOT NULL,
    value          text        NOT NULL,
    user_id        text        NOT NULL,
    first_at       timestamptz NOT NULL
);
CREATE UNIQUE INDEX impression_variant_users_key ON impression_variant_users (environment_id, flag_key, md5(value), user_id);
CREATE TABLE impression_value_users (
    environment_id uuid   NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text   NOT NULL,
    value          text   NOT NULL,
    users          bigint NOT NULL
);
CREATE UNIQUE INDEX impression_value_users_key ON impression_value_users (environment_id, flag_key, md5(value));

INSERT INTO impression_variant_users (environment_id, flag_key, value, user_id, first_at)
SELECT f.environment_id, f.flag_key, v.value, u.user_id, u.first_at
FROM impression_users u
JOIN measure_flags f ON f.flag_no = u.flag_no
JOIN measure_values v ON v.value_no = u.value_no;

INSERT INTO impression_exposures (environment_id, flag_key, user_id, value, first_at)
SELECT f.environment_id, f.flag_key, u.user_id, v.value, u.first_at
FROM impression_users u
JOIN measure_flags f ON f.flag_no = u.flag_no
JOIN measure_values v ON v.value_no = u.value_no
WHERE u.first;

INSERT INTO impression_flag_users (environment_id, flag_key, users)
SELECT f.environment_id, f.flag_key, f.users FROM measure_flags f
WHERE f.users > 0 AND EXISTS (SELECT 1 FROM environments e WHERE e.id = f.environment_id);

INSERT INTO impression_value_users (environment_id, flag_key, value, users)
SELECT f.environment_id, f.flag_key, v.value, v.users
FROM measure_values v JOIN measure_flags f ON f.flag_no = v.flag_no
WHERE v.users > 0 AND EXISTS (SELECT 1 FROM environments e WHERE e.id = f.environment_id);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION measurement_rollups_delete_environment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM impressions WHERE environment_id = OLD.id;
    DELETE FROM goal_events WHERE environment_id = OLD.id;
    DELETE FROM impression_summaries WHERE environment_id = OLD.id;
    DELETE FROM impression_exposures WHERE environment_id = OLD.id;
    DELETE FROM impression_variant_users WHERE environment_id = OLD.id;
    DELETE FROM goal_event_users WHERE environment_id = OLD.id;
    RETURN OLD;
END
$$;
-- +goose StatementEnd

DROP TABLE impression_users;
DROP TABLE measure_values;
DROP TABLE measure_flags;
