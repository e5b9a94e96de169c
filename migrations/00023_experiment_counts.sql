-- Experiment results kept current by the fold (docs/architecture.md,
-- Experiment counts).
--
-- An experiment's result is, per arm, the users whose first exposure to the
-- flag was that arm, and those of them whose latest goal event of the key
-- occurred at or after that first exposure. Both are a function of two
-- rollups: the users' first exposures (impression_users, the rows marked
-- first) and their latest goal events (goal_event_users). Computing it at
-- read time visits every user of the flag; these two tables keep it
-- instead, for each (environment, flag, goal event key) some experiment
-- measures, and every writer of those two rollups (the impression and goal
-- event folds, retention) changes the counts of the users it changes in the
-- same transaction, holding one lock (queries/experiment_counts.sql) so that
-- no two of them decide from what the other is changing.
--
-- A metric starts not ready; the server's builder (server/measure/
-- experiment_counts.go) counts its users once and marks it ready, and until
-- then reads compute the result as before. The upgrade only adds the
-- metrics of the existing experiments: start-up does not wait for a count.

-- +goose Up
CREATE TABLE experiment_metrics (
    metric_no      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id uuid    NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text    NOT NULL,
    event_key      text    NOT NULL,
    ready          boolean NOT NULL DEFAULT false,
    UNIQUE (environment_id, flag_key, event_key)
);
-- The goal event fold finds the metrics of an event key.
CREATE INDEX experiment_metrics_event_key_idx ON experiment_metrics (environment_id, event_key);

CREATE TABLE experiment_arm_counts (
    metric_no integer NOT NULL REFERENCES experiment_metrics (metric_no) ON DELETE CASCADE,
    value_no  integer NOT NULL, -- measure_values
    exposed   bigint  NOT NULL,
    converted bigint  NOT NULL,
    PRIMARY KEY (metric_no, value_no)
);

INSERT INTO experiment_metrics (environment_id, flag_key, event_key)
SELECT DISTINCT environment_id, flag_key, goal_event_key FROM experiments
ORDER BY 1, 2, 3;

-- +goose Down
DROP TABLE experiment_arm_counts;
DROP TABLE experiment_metrics;
