-- Single sign-on through one OpenID Connect provider (docs/sso.md).
--
-- workspace_sso holds the provider's settings in a single row (id = 1); no row
-- means single sign-on is off. The client secret is stored sealed with
-- AES-256-GCM under a key derived from SESSION_SECRET (server/auth/box.go),
-- never in clear.
--
-- users.oidc_issuer and users.oidc_subject link a user to the provider's
-- account ("iss" and "sub" of its ID tokens) at their first SSO sign-in;
-- users.sso_linked (00014) is set with them.
--
-- project_members.source tells memberships made by group mappings ('sso')
-- from memberships made by hand ('manual'): a sign-in only ever changes or
-- removes the former.
--
-- sso_used_states records each sign-in's state once it has been used, so a
-- callback replayed with the same state cookie is refused on every instance.

-- +goose Up
CREATE TABLE workspace_sso (
    id                    integer     PRIMARY KEY DEFAULT 1 CONSTRAINT workspace_sso_single_row CHECK (id = 1),
    issuer                text        NOT NULL,
    client_id             text        NOT NULL,
    client_secret_sealed  bytea       NOT NULL,
    scopes                text[]      NOT NULL,
    groups_claim          text        NOT NULL,
    allowed_email_domains text[]      NOT NULL,
    auto_provision        boolean     NOT NULL,
    group_mappings        jsonb       NOT NULL,
    admin_groups          text[]      NOT NULL,
    password_login        text        NOT NULL CONSTRAINT workspace_sso_password_login_check CHECK (password_login IN ('enabled', 'admins_only')),
    updated_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);

ALTER TABLE users ADD COLUMN oidc_issuer text;
ALTER TABLE users ADD COLUMN oidc_subject text;
CREATE UNIQUE INDEX users_oidc_key ON users (oidc_issuer, oidc_subject) WHERE oidc_subject IS NOT NULL;

ALTER TABLE project_members ADD COLUMN source text NOT NULL DEFAULT 'manual'
    CONSTRAINT project_members_source_check CHECK (source IN ('manual', 'sso'));

CREATE TABLE sso_used_states (
    state_hash bytea       PRIMARY KEY,
    expires_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE sso_used_states;
ALTER TABLE project_members DROP COLUMN source;
DROP INDEX users_oidc_key;
ALTER TABLE users DROP COLUMN oidc_subject;
ALTER TABLE users DROP COLUMN oidc_issuer;
DROP TABLE workspace_sso;
