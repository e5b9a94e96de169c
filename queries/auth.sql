-- Authentication: sessions, login lockout and credential lookups. Every
-- request re-reads these, so revocations, role changes and deactivation apply
-- at once: a deactivated user's sessions and tokens are not found.

-- name: CreateSession :exec
INSERT INTO sessions (id, user_id, expires_at) VALUES (@id, @user_id, @expires_at);

-- name: DeleteSession :exec
DELETE FROM sessions WHERE id = @id;

-- name: GetSessionUser :one
SELECT u.id, u.name, u.email, u.role
FROM sessions s
JOIN users u ON u.id = s.user_id
WHERE s.id = @id AND s.expires_at > @now AND u.active;

-- name: GetTokenUser :one
SELECT t.id AS token_id, t.prefix AS token_prefix, t.scope, t.expires_at, t.last_used_at, u.id, u.name, u.email, u.role
FROM personal_access_tokens t
JOIN users u ON u.id = t.user_id
WHERE t.token_hash = @token_hash AND u.active;

-- name: TouchToken :exec
-- Records use at most once a minute (stale_before = now - 1 min), so a busy
-- script does not write on every call.
UPDATE personal_access_tokens SET last_used_at = @now
WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @stale_before);

-- name: GetSDKKeyByHash :one
SELECT id, kind, prefix, project_id, environment_id FROM sdk_keys WHERE key_hash = @key_hash;

-- name: GetLegacyKeyEnvironment :one
-- The legacy SDK_KEY is bound to the Production environment of the Default
-- project (docs/reference/identity.md, Legacy SDK key).
SELECT e.id, e.project_id
FROM environments e
JOIN projects p ON p.id = e.project_id
WHERE p.slug = 'default' AND e.slug = 'production';

-- name: GetUserForLogin :one
SELECT id, name, email, role, active, password_hash FROM users WHERE lower(email) = lower(@email);

-- name: GetUserByID :one
SELECT id, name, email, role, created_at FROM users WHERE id = @id;

-- name: EnsureLoginAttempt :exec
INSERT INTO login_attempts (email, failures, window_started_at)
VALUES (@email, 0, @now)
ON CONFLICT (email) DO NOTHING;

-- name: LockLoginAttempt :one
SELECT * FROM login_attempts WHERE email = @email FOR UPDATE;

-- name: UpdateLoginAttempt :exec
UPDATE login_attempts
SET failures = @failures, window_started_at = @window_started_at, locked_until = @locked_until
WHERE email = @email;

-- name: DeleteLoginAttempt :exec
DELETE FROM login_attempts WHERE email = @email;

-- name: RenameWorkspace :exec
UPDATE workspace SET name = @name WHERE id = 1;

-- name: GetSDKKeyByID :one
SELECT id, kind, prefix, project_id, environment_id, key_hash FROM sdk_keys WHERE id = @id;
