-- name: ListMembers :many
-- Newest member first, with the user's name and email.
SELECT m.user_id, u.name, u.email, m.role
FROM project_members m
JOIN users u ON u.id = m.user_id
WHERE m.project_id = @project_id
ORDER BY m.created_at DESC, m.user_id DESC;

-- name: LockMember :one
-- A membership with the user's name and email, locked until the transaction
-- ends (so that a change's audit entry shows what it replaced).
SELECT m.user_id, u.name, u.email, m.role
FROM project_members m
JOIN users u ON u.id = m.user_id
WHERE m.project_id = @project_id AND m.user_id = @user_id
FOR UPDATE OF m;

-- name: AddMember :exec
INSERT INTO project_members (project_id, user_id, role) VALUES (@project_id, @user_id, @role);

-- name: UpdateMemberRole :execrows
UPDATE project_members SET role = @role WHERE project_id = @project_id AND user_id = @user_id;

-- name: RemoveMember :execrows
DELETE FROM project_members WHERE project_id = @project_id AND user_id = @user_id;
