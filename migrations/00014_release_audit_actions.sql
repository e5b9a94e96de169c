-- A guarded release appends an audit entry for each of its events
-- (release.started, release.advanced, ...; server/release/transitions.go),
-- which the action check of 00001 refused, so no release could start. The
-- check is added NOT VALID and validated apart, so that the table is
-- scanned under a lock that lets writes on.
-- +goose Up
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_action_check;
ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_action_check CHECK (action IN (
    'create', 'replace', 'update', 'delete', 'promote', 'archive', 'unarchive',
    'release.started', 'release.advanced', 'release.paused', 'release.resumed',
    'release.rolled_back', 'release.completed', 'release.cancelled')) NOT VALID;
ALTER TABLE audit_entries VALIDATE CONSTRAINT audit_entries_action_check;

-- +goose Down
-- Releases' entries stay (the table is append-only): the narrower check
-- applies to new rows only.
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_action_check;
ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_action_check CHECK (action IN
    ('create', 'replace', 'update', 'delete', 'promote', 'archive', 'unarchive')) NOT VALID;
