-- name: ListChatIntegrations :many
SELECT * FROM chat_integrations WHERE environment_id = @environment_id ORDER BY created_at DESC, id;

-- name: GetChatIntegration :one
SELECT * FROM chat_integrations WHERE environment_id = @environment_id AND id = @id;

-- name: GetChatIntegrationByID :one
SELECT * FROM chat_integrations WHERE id = @id;

-- name: InsertChatIntegration :one
INSERT INTO chat_integrations (environment_id, kind, name, webhook_url, events, enabled)
VALUES (@environment_id, @kind, @name, @webhook_url, @events, @enabled)
RETURNING *;

-- name: UpdateChatIntegration :one
UPDATE chat_integrations SET name = @name, webhook_url = @webhook_url, events = @events, enabled = @enabled
WHERE id = @id
RETURNING *;

-- name: DeleteChatIntegration :one
DELETE FROM chat_integrations WHERE environment_id = @environment_id AND id = @id
RETURNING *;

-- name: ListEnabledChatIntegrations :many
SELECT * FROM chat_integrations WHERE environment_id = @environment_id AND enabled ORDER BY id;

-- name: InsertChatDelivery :one
INSERT INTO chat_deliveries (integration_id, event, status_code, response_body, error)
VALUES (@integration_id, @event, @status_code, @response_body, @error)
RETURNING *;

-- name: ListChatDeliveries :many
SELECT * FROM chat_deliveries WHERE integration_id = @integration_id ORDER BY id DESC LIMIT 200;

-- name: PruneChatDeliveries :exec
-- The latest 200 per integration are retained (docs/reference/limits.md,
-- Logs kept).
DELETE FROM chat_deliveries d
WHERE d.integration_id = @integration_id::uuid
  AND d.id NOT IN (SELECT k.id FROM chat_deliveries k WHERE k.integration_id = @integration_id::uuid ORDER BY k.id DESC LIMIT 200);
