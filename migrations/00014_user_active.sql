-- Deactivation (docs/reference/identity.md, Deactivation). A deactivated user
-- keeps their row, memberships and personal access tokens, but cannot sign in
-- by any path and every credential of theirs is refused while they stay
-- deactivated. Deactivating ends them through the same route as every other
-- ended credential: the trigger below writes a 'revoke' of 'user:<id>' to the
-- change log, exactly as a workspace role change does
-- (00007_credential_log.sql), so the committing instance forgets the user's
-- credentials before it answers and every instance ends their streams.
--
-- sso_linked says whether the user is linked to the organisation's identity
-- provider. Nothing links users yet, so it stays false; single sign-on will
-- set it when it links a user.

-- +goose Up
ALTER TABLE users ADD COLUMN active boolean NOT NULL DEFAULT true;
ALTER TABLE users ADD COLUMN sso_linked boolean NOT NULL DEFAULT false;

CREATE TRIGGER change_log_users_deactivated AFTER UPDATE OF active ON users
    FOR EACH ROW WHEN (OLD.active AND NOT NEW.active) EXECUTE FUNCTION change_log_users();

-- +goose Down
DROP TRIGGER change_log_users_deactivated ON users;
ALTER TABLE users DROP COLUMN sso_linked;
ALTER TABLE users DROP COLUMN active;
