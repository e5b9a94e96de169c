-- Every way a credential stops being valid goes through one route: a
-- trigger on the rows behind it writes a 'revoke' entry to the change
-- log, in the transaction that removes them, whatever code path or cascade
-- removed them. Before this migration only a direct SDK-key deletion was
-- recorded through the API, so a key whose environment or project was
-- deleted kept working from the SDK-key cache until the next poll.
--
-- The entry's key names the credential: 'sdk_key:<id>', 'token:<id>',
-- 'session:<hex sha-256 of the session id>' (the id itself never leaves the
-- database), or 'user:<id>' for everything a user holds (the user deleted,
-- their workspace role changed, or a project membership removed). xid is the
-- writing transaction, so the instance that commits it can read its own
-- revocations before it answers (server/identity/tx.go); every other instance
-- hears of them on the bus, and from the log if the bus lost them.

-- +goose Up
ALTER TABLE change_log ALTER COLUMN environment_id DROP NOT NULL;
ALTER TABLE change_log ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX change_log_revoke_xid_idx ON change_log (xid) WHERE kind = 'revoke';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION change_log_sdk_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (environment_id, kind, key) VALUES (OLD.environment_id, 'revoke', 'sdk_key:' || OLD.id);
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION change_log_tokens() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (kind, key) VALUES ('revoke', 'token:' || OLD.id);
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER change_log_tokens AFTER DELETE ON personal_access_tokens
    FOR EACH ROW EXECUTE FUNCTION change_log_tokens();

-- +goose StatementBegin
CREATE FUNCTION change_log_sessions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (kind, key) VALUES ('revoke', 'session:' || encode(sha256(OLD.id), 'hex'));
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER change_log_sessions AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION change_log_sessions();

-- +goose StatementBegin
CREATE FUNCTION change_log_user_access() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (kind, key) VALUES ('revoke', 'user:' || OLD.user_id);
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER change_log_members AFTER DELETE ON project_members
    FOR EACH ROW EXECUTE FUNCTION change_log_user_access();

-- +goose StatementBegin
CREATE FUNCTION change_log_users() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (kind, key) VALUES ('revoke', 'user:' || OLD.id);
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER change_log_users_deleted AFTER DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION change_log_users();
CREATE TRIGGER change_log_users_role AFTER UPDATE OF role ON users
    FOR EACH ROW WHEN (OLD.role IS DISTINCT FROM NEW.role) EXECUTE FUNCTION change_log_users();

-- +goose Down
DROP TRIGGER change_log_users_role ON users;
DROP TRIGGER change_log_users_deleted ON users;
DROP FUNCTION change_log_users();
DROP TRIGGER change_log_members ON project_members;
DROP FUNCTION change_log_user_access();
DROP TRIGGER change_log_sessions ON sessions;
DROP FUNCTION change_log_sessions();
DROP TRIGGER change_log_tokens ON personal_access_tokens;
DROP FUNCTION change_log_tokens();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION change_log_sdk_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (environment_id, kind, key) VALUES (OLD.environment_id, 'revoke', OLD.id::text);
    RETURN OLD;
END;
$$;
-- +goose StatementEnd
DELETE FROM change_log WHERE environment_id IS NULL;
DROP INDEX change_log_revoke_xid_idx;
ALTER TABLE change_log DROP COLUMN xid;
ALTER TABLE change_log ALTER COLUMN environment_id SET NOT NULL;
