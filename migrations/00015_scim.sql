-- Provisioning through SCIM 2.0 (docs/scim.md).
--
-- scim_tokens are the bearer credentials an identity provider uses under
-- /scim/v2/; like personal access tokens only their SHA-256 and display prefix
-- are stored. They end nothing when deleted (no stream or session hangs on
-- them: every SCIM request looks its token up), so they need no change-log
-- trigger.
--
-- scim_users holds what SCIM says about a workspace user beyond users' own
-- columns: the provider's externalId, the given and family names, and whether
-- the provider deleted the user. A deleted user keeps their row in users
-- (deactivated, without memberships) so the audit log keeps its actor; SCIM
-- then answers 404 for them, and a later POST of the same userName brings
-- them back.
--
-- scim_groups and scim_group_members store the provider's groups and their
-- members. Nothing maps groups to roles yet.

-- +goose Up
CREATE TABLE scim_tokens (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text        NOT NULL CONSTRAINT scim_tokens_name_check
                                 CHECK (btrim(name) <> '' AND char_length(name) <= 100),
    hash         bytea       NOT NULL CONSTRAINT scim_tokens_hash_key UNIQUE,
    prefix       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_used_at timestamptz
);

CREATE TABLE scim_users (
    user_id     bigint      PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    external_id text,
    given_name  text,
    family_name text,
    deleted     boolean     NOT NULL DEFAULT false,
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE scim_groups (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    display_name text        NOT NULL CONSTRAINT scim_groups_display_name_check CHECK (btrim(display_name) <> ''),
    external_id  text,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- Display names are unique regardless of case, like user e-mails.
CREATE UNIQUE INDEX scim_groups_display_name_key ON scim_groups (lower(display_name));

CREATE TABLE scim_group_members (
    group_id uuid   NOT NULL REFERENCES scim_groups (id) ON DELETE CASCADE,
    user_id  bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX scim_group_members_user_id_idx ON scim_group_members (user_id);

-- +goose Down
DROP TABLE scim_group_members;
DROP TABLE scim_groups;
DROP TABLE scim_users;
DROP TABLE scim_tokens;
