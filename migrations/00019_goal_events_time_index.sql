-- The raw export (docs/export.md, server/measure/export.go) bounds the id
-- range it walks with the time range it was asked for: the smallest and
-- largest id of the environment's rows in [from, to). Impressions find those
-- through their block-range index on evaluated_at (00010); goal events had
-- no index on time, so every export of them, however short its range, read
-- the whole table once. Goal events arrive in about the order of their time
-- (occurred_at is never later than the receive time), so a block-range index
-- finds a range's rows for a few pages of index, and costs ingest almost
-- nothing: one summary per 128 heap pages, no entry per row.
-- +goose Up
CREATE INDEX goal_events_occurred_at_brin ON goal_events USING brin (occurred_at) WITH (autosummarize = on);

-- +goose Down
DROP INDEX goal_events_occurred_at_brin;
