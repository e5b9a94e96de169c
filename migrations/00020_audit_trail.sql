-- The workspace audit trail (docs/audit.md): one entry per write of any
-- kind, written in the transaction of the write.
--
-- body is the entry's canonical bytes, exactly as the server encoded them
-- (its JSON without the hash): the API answers from it, the hash chain and
-- the MAC cover it, and the other columns are copies of its fields kept
-- only to filter on. The id is taken from the sequence before the row is
-- written, so that the body (and its MAC, keyed with a secret the database
-- never sees) covers it: an entry inserted by hand cannot carry a valid MAC.
--
-- An entry's hash is SHA-256 over the previous entry's hash and body; the
-- sealer writes it to audit_trail_hashes seconds after the entry's commit.
-- Hashes live apart so that sealing inserts a small row instead of
-- rewriting the entry with all its indexes. Writers hold a shared
-- advisory lock from taking the id to their commit, so the sealer knows when
-- every id below a point is either committed or gone for good.

-- +goose Up
CREATE SEQUENCE audit_trail_id_seq AS bigint;

CREATE TABLE audit_trail (
    id             bigint      PRIMARY KEY,
    at             timestamptz NOT NULL,
    action         text        NOT NULL,
    actor_kind     text        NOT NULL,
    actor_email    text,
    actor_label    text,
    resource_type  text        NOT NULL,
    resource_id    text        NOT NULL,
    project_id     uuid,
    environment_id uuid,
    body           bytea       NOT NULL,
    mac            bytea       NOT NULL
);
ALTER SEQUENCE audit_trail_id_seq OWNED BY audit_trail.id;

-- GET /api/audit reads newest first, by (at, id), along one of these: each
-- filter's rows in that order, so that a page and any time bound is a
-- range of one index.
CREATE INDEX audit_trail_at_idx          ON audit_trail (at DESC, id DESC);
CREATE INDEX audit_trail_project_idx     ON audit_trail (project_id, at DESC, id DESC) WHERE project_id IS NOT NULL;
CREATE INDEX audit_trail_environment_idx ON audit_trail (environment_id, at DESC, id DESC) WHERE environment_id IS NOT NULL;
CREATE INDEX audit_trail_actor_email_idx ON audit_trail (actor_email, at DESC, id DESC) WHERE actor_email IS NOT NULL;
CREATE INDEX audit_trail_actor_label_idx ON audit_trail (actor_label, at DESC, id DESC) WHERE actor_label IS NOT NULL;
CREATE INDEX audit_trail_resource_type_idx ON audit_trail (resource_type, at DESC, id DESC);
CREATE INDEX audit_trail_resource_id_idx ON audit_trail (resource_id, at DESC, id DESC);
CREATE INDEX audit_trail_action_idx      ON audit_trail (action text_pattern_ops, at DESC, id DESC);

CREATE TABLE audit_trail_hashes (
    id   bigint PRIMARY KEY,
    hash bytea  NOT NULL
);

-- The last id handed out by any transaction, committed or not (sequences
-- are not transactional); 0 before the first.
-- +goose StatementBegin
CREATE FUNCTION audit_trail_last_id() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT coalesce(pg_sequence_last_value('audit_trail_id_seq'), 0)
$$;
-- +goose StatementEnd

-- The transactions (virtual transaction ids) that hold the writers' shared
-- advisory lock now, in this database (advisory locks are per database,
-- pg_locks is the whole server's): the key 8117240063094512301 of queries/trail.sql's
-- NextTrailID, which pg_locks shows split into its two 32-bit halves.
-- +goose StatementBegin
CREATE FUNCTION audit_trail_writers() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
    SELECT virtualtransaction FROM pg_locks
    WHERE locktype = 'advisory' AND objsubid = 1 AND granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND ((classid::bigint << 32) | objid::bigint) = 8117240063094512301
$$;
-- +goose StatementEnd

-- What retention removed from the start of the chain: the last removed
-- entry's id and hash, the previous hash of the first entry that remains.
CREATE TABLE audit_trail_anchor (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    id        bigint  NOT NULL,
    hash      bytea   NOT NULL
);

-- The last sealed entry's id and hash, where the next seal continues: kept
-- apart from the entries, so that deleting the newest sealed entries by hand
-- does not move the chain's end back with them.
CREATE TABLE audit_trail_head (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    id        bigint  NOT NULL,
    hash      bytea   NOT NULL
);

-- The trail and its hashes are append-only for the server: no UPDATE, and
-- a DELETE is retention's alone, which announces itself with a
-- transaction-local setting. Whoever can bypass this (a superuser, a
-- disabled trigger) is what verification finds.
-- +goose StatementBegin
CREATE FUNCTION audit_trail_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('switchyard.audit_retention', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the audit trail is append-only (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_trail_append_only
    BEFORE UPDATE OR DELETE ON audit_trail
    FOR EACH ROW EXECUTE FUNCTION audit_trail_append_only();
CREATE TRIGGER audit_trail_hashes_append_only
    BEFORE UPDATE OR DELETE ON audit_trail_hashes
    FOR EACH ROW EXECUTE FUNCTION audit_trail_append_only();

-- +goose Down
DROP TABLE audit_trail_head;
DROP TABLE audit_trail_anchor;
DROP TABLE audit_trail_hashes;
DROP TABLE audit_trail;
DROP FUNCTION audit_trail_append_only();
DROP FUNCTION audit_trail_writers();
DROP FUNCTION audit_trail_last_id();
