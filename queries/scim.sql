-- name: CreateSCIMToken :one
INSERT INTO scim_tokens (name, hash, prefix)
VALUES (@name, @hash, @prefix)
RETURNING id, name, prefix, created_at, last_used_at;

-- name: ListSCIMTokens :many
-- Newest first; never the hash.
SELECT id, name, prefix, created_at, last_used_at FROM scim_tokens ORDER BY created_at DESC, id DESC;

-- name: DeleteSCIMToken :one
-- The token revoked, as listed; no row when there was none.
DELETE FROM scim_tokens WHERE id = @id
RETURNING id, name, prefix, created_at, last_used_at;

-- name: GetSCIMTokenByHash :one
SELECT id, prefix, last_used_at FROM scim_tokens WHERE hash = @hash;

-- name: TouchSCIMToken :exec
-- Records a use at most once a minute, like personal access tokens.
UPDATE scim_tokens SET last_used_at = @now::timestamptz
WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @stale_before::timestamptz);

-- name: GetSCIMUser :one
-- A workspace user as SCIM sees them; one the provider deleted is not found.
SELECT u.id, u.name, u.email, u.active, u.created_at,
       s.external_id, s.given_name, s.family_name, coalesce(s.updated_at, u.created_at)::timestamptz AS updated_at
FROM users u LEFT JOIN scim_users s ON s.user_id = u.id
WHERE u.id = @id AND NOT coalesce(s.deleted, false);

-- name: ListSCIMUsers :many
-- Oldest first, so that paging through startIndex is stable; user_name and
-- external_id filter when given (userName case-insensitively).
SELECT u.id, u.name, u.email, u.active, u.created_at,
       s.external_id, s.given_name, s.family_name, coalesce(s.updated_at, u.created_at)::timestamptz AS updated_at
FROM users u LEFT JOIN scim_users s ON s.user_id = u.id
WHERE NOT coalesce(s.deleted, false)
  AND (sqlc.narg(user_name)::text IS NULL OR lower(u.email) = lower(sqlc.narg(user_name)::text))
  AND (sqlc.narg(external_id)::text IS NULL OR s.external_id = sqlc.narg(external_id)::text)
ORDER BY u.id
LIMIT @row_limit OFFSET @row_offset;

-- name: CountSCIMUsers :one
SELECT count(*) FROM users u LEFT JOIN scim_users s ON s.user_id = u.id
WHERE NOT coalesce(s.deleted, false)
  AND (sqlc.narg(user_name)::text IS NULL OR lower(u.email) = lower(sqlc.narg(user_name)::text))
  AND (sqlc.narg(external_id)::text IS NULL OR s.external_id = sqlc.narg(external_id)::text);

-- name: LockUserByEmail :one
-- The user holding an e-mail in any letter case, and whether the provider
-- deleted them, locked until the transaction ends.
SELECT u.id, coalesce(s.deleted, false)::boolean AS deleted
FROM users u LEFT JOIN scim_users s ON s.user_id = u.id
WHERE lower(u.email) = lower(@email)
FOR UPDATE OF u;

-- name: UpsertSCIMUser :exec
INSERT INTO scim_users (user_id, external_id, given_name, family_name, deleted)
VALUES (@user_id, @external_id, @given_name, @family_name, @deleted)
ON CONFLICT (user_id) DO UPDATE
SET external_id = excluded.external_id, given_name = excluded.given_name,
    family_name = excluded.family_name, deleted = excluded.deleted, updated_at = clock_timestamp();

-- name: UpdateUserNameAndEmail :exec
UPDATE users SET name = @name, email = @email WHERE id = @id;

-- name: DeleteMembershipsByUser :exec
-- Ends every project membership of the user; the project_members trigger
-- records each one in the change log.
DELETE FROM project_members WHERE user_id = @user_id;

-- name: DeleteSCIMGroupMembershipsByUser :exec
DELETE FROM scim_group_members WHERE user_id = @user_id;

-- name: CreateSCIMGroup :one
INSERT INTO scim_groups (display_name, external_id)
VALUES (@display_name, @external_id)
RETURNING *;

-- name: GetSCIMGroup :one
SELECT * FROM scim_groups WHERE id = @id;

-- name: LockSCIMGroup :one
SELECT * FROM scim_groups WHERE id = @id FOR UPDATE;

-- name: ListSCIMGroups :many
-- Oldest first, so that paging through startIndex is stable; display_name
-- (case-insensitively) and external_id filter when given.
SELECT * FROM scim_groups
WHERE (sqlc.narg(display_name)::text IS NULL OR lower(display_name) = lower(sqlc.narg(display_name)::text))
  AND (sqlc.narg(external_id)::text IS NULL OR external_id = sqlc.narg(external_id)::text)
ORDER BY created_at, id
LIMIT @row_limit OFFSET @row_offset;

-- name: CountSCIMGroups :one
SELECT count(*) FROM scim_groups
WHERE (sqlc.narg(display_name)::text IS NULL OR lower(display_name) = lower(sqlc.narg(display_name)::text))
  AND (sqlc.narg(external_id)::text IS NULL OR external_id = sqlc.narg(external_id)::text);

-- name: UpdateSCIMGroup :one
UPDATE scim_groups SET display_name = @display_name, external_id = @external_id, updated_at = clock_timestamp()
WHERE id = @id
RETURNING *;

-- name: DeleteSCIMGroup :execrows
DELETE FROM scim_groups WHERE id = @id;

-- name: ListSCIMGroupMembers :many
-- The members of the given groups, with the user's name and e-mail.
SELECT m.group_id, m.user_id, u.name, u.email
FROM scim_group_members m JOIN users u ON u.id = m.user_id
WHERE m.group_id = ANY(@group_ids::uuid[])
ORDER BY m.group_id, m.user_id;

-- name: AddSCIMGroupMember :exec
INSERT INTO scim_group_members (group_id, user_id) VALUES (@group_id, @user_id)
ON CONFLICT DO NOTHING;

-- name: RemoveSCIMGroupMember :exec
DELETE FROM scim_group_members WHERE group_id = @group_id AND user_id = @user_id;

-- name: ExistsSCIMUser :one
-- Whether a user exists that the provider has not deleted.
SELECT EXISTS (
    SELECT 1 FROM users u LEFT JOIN scim_users s ON s.user_id = u.id
    WHERE u.id = @id AND NOT coalesce(s.deleted, false)
);

-- name: ListSCIMGroupIDsByMember :many
-- The groups the user is a member of, in id order.
SELECT group_id FROM scim_group_members WHERE user_id = @user_id ORDER BY group_id;
