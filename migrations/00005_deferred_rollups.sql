-- Rollups are folded after ingest instead of inside it (ingest must run
-- close to raw COPY speed). Ingest copies the raw rows and records
-- the batch's rollup input here, in one transaction; a background folder,
-- and every read of the rollups before it reads, folds pending batches
-- under one advisory lock, so each batch is applied exactly once and every
-- read reflects every acknowledged write.

-- +goose Up
CREATE TABLE rollup_pending (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind       text        NOT NULL CHECK (kind IN ('impressions', 'events')),
    -- the rollup statement's parameters, JSON-encoded by the server
    params     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- +goose Down
DROP TABLE rollup_pending;
