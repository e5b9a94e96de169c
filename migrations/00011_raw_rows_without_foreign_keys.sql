-- The raw measurement tables lose their foreign key to environments
-- (summaries, and OFREP's single-flag evaluations, which write an impression
-- each): the referential check ran once per copied row, a query and a lock
-- of the environment's row per impression. Ingest now locks the
-- environment's row once per batch (FOR KEY SHARE, queries/rollups.sql,
-- LockEnvironmentForIngest), which refuses a deleted environment and holds
-- off its deletion until the batch commits, and the trigger that already
-- clears the per-user rollups of a deleted environment clears these rows too,
-- as ON DELETE CASCADE did.
-- +goose Up
ALTER TABLE impressions DROP CONSTRAINT impressions_environment_id_fkey;
ALTER TABLE goal_events DROP CONSTRAINT goal_events_environment_id_fkey;
ALTER TABLE impression_summaries DROP CONSTRAINT impression_summaries_environment_id_fkey;

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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION measurement_rollups_delete_environment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM impression_exposures WHERE environment_id = OLD.id;
    DELETE FROM impression_variant_users WHERE environment_id = OLD.id;
    DELETE FROM goal_event_users WHERE environment_id = OLD.id;
    RETURN OLD;
END
$$;
-- +goose StatementEnd
DELETE FROM impressions i WHERE NOT EXISTS (SELECT 1 FROM environments e WHERE e.id = i.environment_id);
DELETE FROM goal_events g WHERE NOT EXISTS (SELECT 1 FROM environments e WHERE e.id = g.environment_id);
DELETE FROM impression_summaries s WHERE NOT EXISTS (SELECT 1 FROM environments e WHERE e.id = s.environment_id);
ALTER TABLE impressions ADD CONSTRAINT impressions_environment_id_fkey
    FOREIGN KEY (environment_id) REFERENCES environments (id) ON DELETE CASCADE;
ALTER TABLE goal_events ADD CONSTRAINT goal_events_environment_id_fkey
    FOREIGN KEY (environment_id) REFERENCES environments (id) ON DELETE CASCADE;
ALTER TABLE impression_summaries ADD CONSTRAINT impression_summaries_environment_id_fkey
    FOREIGN KEY (environment_id) REFERENCES environments (id) ON DELETE CASCADE;
