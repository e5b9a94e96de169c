-- name: GetWorkspaceSSO :one
SELECT * FROM workspace_sso WHERE id = 1;

-- name: UpsertWorkspaceSSO :one
INSERT INTO workspace_sso (id, issuer, client_id, client_secret_sealed, scopes, groups_claim,
    allowed_email_domains, auto_provision, group_mappings, admin_groups, password_login)
VALUES (1, @issuer, @client_id, @client_secret_sealed, @scopes, @groups_claim,
    @allowed_email_domains, @auto_provision, @group_mappings, @admin_groups, @password_login)
ON CONFLICT (id) DO UPDATE SET
    issuer = excluded.issuer, client_id = excluded.client_id,
    client_secret_sealed = excluded.client_secret_sealed, scopes = excluded.scopes,
    groups_claim = excluded.groups_claim, allowed_email_domains = excluded.allowed_email_domains,
    auto_provision = excluded.auto_provision, group_mappings = excluded.group_mappings,
    admin_groups = excluded.admin_groups, password_login = excluded.password_login,
    updated_at = clock_timestamp()
RETURNING *;

-- name: DeleteWorkspaceSSO :execrows
DELETE FROM workspace_sso WHERE id = 1;

-- name: GetSSOPasswordLogin :one
-- The password-login policy; no row (SSO off) reads as 'enabled'.
SELECT coalesce((SELECT password_login FROM workspace_sso WHERE id = 1), 'enabled')::text;

-- name: UseSSOState :execrows
-- Records a sign-in's state as used; 0 rows means it was used before.
INSERT INTO sso_used_states (state_hash, expires_at) VALUES (@state_hash, @expires_at)
ON CONFLICT (state_hash) DO NOTHING;

-- name: DeleteExpiredSSOStates :exec
DELETE FROM sso_used_states WHERE expires_at < @now;

-- name: GetUserByOIDCSubject :one
SELECT id, email, role, active FROM users WHERE oidc_issuer = @issuer AND oidc_subject = @subject FOR UPDATE;

-- name: GetUserByEmailForUpdate :one
SELECT id, email, role, active, oidc_subject FROM users WHERE lower(email) = lower(@email) FOR UPDATE;

-- name: LinkUserOIDC :exec
UPDATE users SET oidc_issuer = @issuer, oidc_subject = @subject, sso_linked = true WHERE id = @id;

-- name: CreateSSOUser :one
-- An SSO user has no password: the empty hash matches no password.
INSERT INTO users (name, email, password_hash, role, oidc_issuer, oidc_subject, sso_linked)
VALUES (@name, @email, '', @role, @issuer, @subject, true)
RETURNING id;

-- name: SetUserRole :exec
UPDATE users SET role = @role WHERE id = @id AND role <> @role;

-- name: ListProjectIDs :many
SELECT id FROM projects;

-- name: ListSSOMemberships :many
SELECT project_id, role, source FROM project_members WHERE user_id = @user_id ORDER BY project_id;

-- name: UpsertSSOMembership :execrows
-- A membership made by hand stays as it is; 0 rows when nothing changed.
INSERT INTO project_members (project_id, user_id, role, source) VALUES (@project_id, @user_id, @role, 'sso')
ON CONFLICT (project_id, user_id) DO UPDATE SET role = excluded.role
WHERE project_members.source = 'sso' AND project_members.role <> excluded.role;

-- name: RemoveSSOMembership :execrows
DELETE FROM project_members WHERE project_id = @project_id AND user_id = @user_id AND source = 'sso';

-- name: SetUserSSOGroups :exec
-- The groups claim of the user's latest sign-in; half of the groups that
-- group mappings and admin groups apply to (migrations/00017_user_sso_groups.sql).
UPDATE users SET sso_groups = @groups::text[] WHERE id = @id;

-- name: ListUserGroups :many
-- The groups group mappings and admin groups apply to: the display names of
-- the user's SCIM groups and the groups of their latest sign-in's claim,
-- each once.
SELECT g.display_name AS name
FROM scim_group_members m JOIN scim_groups g ON g.id = m.group_id
WHERE m.user_id = @user_id
UNION
SELECT unnest(u.sso_groups)::text AS name FROM users u WHERE u.id = @user_id
ORDER BY name;

-- name: LockUsers :many
-- Locks the users' rows in id order, so that transactions locking several
-- users never wait on each other in a cycle. Unknown ids are skipped.
SELECT id, role, active FROM users WHERE id = ANY(@ids::bigint[]) ORDER BY id FOR UPDATE;
