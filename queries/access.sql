-- name: GetEnvironment :one
SELECT * FROM environments WHERE id = @id;

-- name: GetProject :one
SELECT * FROM projects WHERE id = @id;

-- name: GetMemberRole :one
SELECT role FROM project_members WHERE project_id = @project_id AND user_id = @user_id;
