-- Evaluation summaries and flag status (docs/reference/measurement.md,
-- Summaries and Flag status).
--
-- Summaries are counts of evaluations an SDK did not report one by one.
-- Ingest copies them raw, like impressions, and the folder adds them to the
-- rollups (server/measure/rollups.go): to impression_daily in a column of
-- their own, since they count wherever evaluations are counted but not in
-- the impression list, and to evaluation_hours.
--
-- evaluation_hours counts evaluations (impressions and summaries) per flag,
-- value and hour: flag status sums the full hours of its rolling 168-hour
-- window from it and counts the one partial hour at the window's start from
-- the raw rows, through the two time indexes below.
-- +goose Up
CREATE TABLE impression_summaries (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text        NOT NULL CHECK (flag_key ~ '^[A-Za-z0-9_-]{1,100}$'),
    value          text        NOT NULL,
    count          bigint      NOT NULL CHECK (count >= 1),
    start_at       timestamptz NOT NULL,
    end_at         timestamptz NOT NULL CHECK (start_at <= end_at),
    received_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX impression_summaries_end_at_idx ON impression_summaries (environment_id, end_at);

ALTER TABLE impression_daily ADD COLUMN summarized bigint NOT NULL DEFAULT 0 CHECK (summarized >= 0);

CREATE TABLE evaluation_hours (
    environment_id uuid        NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text        NOT NULL,
    hour           timestamptz NOT NULL,
    value          text        NOT NULL,
    evaluations    bigint      NOT NULL CHECK (evaluations >= 0)
);
CREATE UNIQUE INDEX evaluation_hours_key ON evaluation_hours (environment_id, flag_key, hour, md5(value));

-- Impressions arrive in about the order of their time: a block-range index
-- finds an hour's rows for almost nothing at ingest.
CREATE INDEX impressions_evaluated_at_brin ON impressions USING brin (evaluated_at) WITH (autosummarize = on);

ALTER TABLE rollup_watermarks DROP CONSTRAINT rollup_watermarks_kind_check;
ALTER TABLE rollup_watermarks ADD CONSTRAINT rollup_watermarks_kind_check
    CHECK (kind IN ('impressions', 'events', 'summaries'));
INSERT INTO rollup_watermarks (kind, folded_through) VALUES ('summaries', 0);

-- The hours status reads, from impressions already folded (later ones are
-- folded with their hour).
INSERT INTO evaluation_hours (environment_id, flag_key, hour, value, evaluations)
SELECT environment_id, flag_key, date_bin('1 hour', evaluated_at, timestamptz '2000-01-01 00:00:00+00'), value, count(*)
FROM impressions
WHERE id <= (SELECT folded_through FROM rollup_watermarks WHERE kind = 'impressions')
  AND evaluated_at >= now() - interval '8 days'
GROUP BY 1, 2, 3, 4;

-- +goose Down
DELETE FROM rollup_watermarks WHERE kind = 'summaries';
ALTER TABLE rollup_watermarks DROP CONSTRAINT rollup_watermarks_kind_check;
ALTER TABLE rollup_watermarks ADD CONSTRAINT rollup_watermarks_kind_check CHECK (kind IN ('impressions', 'events'));
DROP INDEX impressions_evaluated_at_brin;
DROP TABLE evaluation_hours;
ALTER TABLE impression_daily DROP COLUMN summarized;
DROP TABLE impression_summaries;
