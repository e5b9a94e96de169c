-- Rollups are folded from the raw rows up to a watermark instead of from
-- per-batch pending records (writing each batch's rollup input a second
-- time cost about a quarter of the ingest time). Ingest now only
-- copies the raw rows, holding a shared advisory lock; a fold takes the same
-- lock exclusively for an instant (every ingest that was in flight has then
-- committed, and every later one draws larger ids from the identity
-- sequences), reads max(id), and folds the rows between the watermark and
-- that id (server/measure/rollups.go). This relies on the identity sequences
-- keeping CACHE 1, their default: with a per-session cache a later
-- transaction could still insert an id below the watermark.
--
-- The rollups are rebuilt from the raw rows: folding starts at id 0, so
-- whatever rollup_pending still held is not lost, and nothing is counted
-- twice. The first fold after this migration (the background folder, or the
-- first read) recomputes them.

-- +goose Up
CREATE TABLE rollup_watermarks (
    kind           text   PRIMARY KEY CHECK (kind IN ('impressions', 'events')),
    -- every raw row with an id at or below this one is in the rollups
    folded_through bigint NOT NULL CHECK (folded_through >= 0)
);
INSERT INTO rollup_watermarks (kind, folded_through) VALUES ('impressions', 0), ('events', 0);

TRUNCATE impression_daily, impression_exposures, impression_flag_users, impression_variant_users,
    goal_event_keys, goal_event_users;
DROP TABLE rollup_pending;

-- +goose Down
-- The rollups keep what was folded; rows above the watermarks are not in
-- them and the previous version does not fold them.
CREATE TABLE rollup_pending (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind       text        NOT NULL CHECK (kind IN ('impressions', 'events')),
    params     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
DROP TABLE rollup_watermarks;
