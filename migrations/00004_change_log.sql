-- The change log behind real-time delivery. A trigger records
-- every committed flag change and SDK-key revocation, whatever code path
-- made it. Redis pub/sub makes delivery fast but is at-most-once; every
-- instance also reads this log, so a notification lost while Redis is down,
-- or a publish that failed after commit, still reaches every stream.

-- +goose Up
CREATE TABLE change_log (
    seq            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id uuid        NOT NULL,
    kind           text        NOT NULL CHECK (kind IN ('upsert', 'delete', 'revoke')),
    -- the flag key, or for 'revoke' the SDK key's id
    key            text        NOT NULL,
    version        bigint      NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX change_log_created_at_idx ON change_log (created_at);

-- +goose StatementBegin
CREATE FUNCTION change_log_flags() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO change_log (environment_id, kind, key) VALUES (OLD.environment_id, 'delete', OLD.key);
        RETURN OLD;
    END IF;
    INSERT INTO change_log (environment_id, kind, key, version) VALUES (NEW.environment_id, 'upsert', NEW.key, NEW.version);
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER change_log_flags AFTER INSERT OR UPDATE OR DELETE ON flags
    FOR EACH ROW EXECUTE FUNCTION change_log_flags();

-- +goose StatementBegin
CREATE FUNCTION change_log_sdk_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (environment_id, kind, key) VALUES (OLD.environment_id, 'revoke', OLD.id::text);
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER change_log_sdk_keys AFTER DELETE ON sdk_keys
    FOR EACH ROW EXECUTE FUNCTION change_log_sdk_keys();

-- +goose Down
DROP TRIGGER change_log_sdk_keys ON sdk_keys;
DROP FUNCTION change_log_sdk_keys();
DROP TRIGGER change_log_flags ON flags;
DROP FUNCTION change_log_flags();
DROP TABLE change_log;
