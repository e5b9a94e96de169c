-- Guarded releases record their events in the audit log and notify them
-- (docs/releases.md, Events and audit; docs/reference/notifications.md,
-- Events): the audit log's action and a chat integration's event selection
-- take the seven release events too. Without this every release's first
-- audit entry broke audit_entries_action_check, so no release could start.

-- +goose Up
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_action_check;
ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_action_check CHECK (action IN (
    'create', 'replace', 'update', 'delete', 'promote', 'archive', 'unarchive',
    'release.started', 'release.advanced', 'release.paused', 'release.resumed',
    'release.rolled_back', 'release.completed', 'release.cancelled'
));

ALTER TABLE chat_integrations DROP CONSTRAINT chat_integrations_events_check;
ALTER TABLE chat_integrations ADD CONSTRAINT chat_integrations_events_check CHECK (events <@ ARRAY[
    'flag.created', 'flag.updated', 'flag.deleted', 'flag.promoted',
    'change_request.opened', 'change_request.approved', 'change_request.rejected',
    'release.started', 'release.advanced', 'release.paused', 'release.resumed',
    'release.rolled_back', 'release.completed', 'release.cancelled'
]::text[]);

-- +goose Down
-- The release events go first: their audit entries, and their names from
-- event selections (an integration left with none of its events is
-- disabled rather than widened to every event).
DELETE FROM audit_entries WHERE action LIKE 'release.%';
UPDATE chat_integrations
SET enabled = enabled AND EXISTS (SELECT 1 FROM unnest(events) e WHERE e NOT LIKE 'release.%'),
    events = ARRAY(SELECT e FROM unnest(events) e WHERE e NOT LIKE 'release.%')
WHERE EXISTS (SELECT 1 FROM unnest(events) e WHERE e LIKE 'release.%');

ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_action_check;
ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_action_check CHECK (action IN
    ('create', 'replace', 'update', 'delete', 'promote', 'archive', 'unarchive'));

ALTER TABLE chat_integrations DROP CONSTRAINT chat_integrations_events_check;
ALTER TABLE chat_integrations ADD CONSTRAINT chat_integrations_events_check CHECK (events <@ ARRAY[
    'flag.created', 'flag.updated', 'flag.deleted', 'flag.promoted',
    'change_request.opened', 'change_request.approved', 'change_request.rejected'
]::text[]);
