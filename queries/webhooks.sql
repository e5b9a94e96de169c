-- name: ListWebhooks :many
SELECT * FROM webhooks WHERE environment_id = @environment_id ORDER BY created_at DESC, id;

-- name: GetWebhook :one
SELECT * FROM webhooks WHERE environment_id = @environment_id AND id = @id;

-- name: GetWebhookByID :one
SELECT * FROM webhooks WHERE id = @id;

-- name: InsertWebhook :one
INSERT INTO webhooks (environment_id, name, url, secret, enabled)
VALUES (@environment_id, @name, @url, @secret, @enabled)
RETURNING *;

-- name: UpdateWebhook :one
UPDATE webhooks SET name = @name, url = @url, secret = @secret, enabled = @enabled
WHERE id = @id
RETURNING *;

-- name: DeleteWebhook :one
DELETE FROM webhooks WHERE environment_id = @environment_id AND id = @id
RETURNING *;

-- name: ListEnabledWebhooks :many
SELECT * FROM webhooks WHERE environment_id = @environment_id AND enabled ORDER BY id;

-- name: InsertWebhookDelivery :one
INSERT INTO webhook_deliveries (webhook_id, event, status_code, response_body, error)
VALUES (@webhook_id, @event, @status_code, @response_body, @error)
RETURNING *;

-- name: ListWebhookDeliveries :many
SELECT * FROM webhook_deliveries WHERE webhook_id = @webhook_id ORDER BY id DESC LIMIT 100;

-- name: PruneWebhookDeliveries :exec
-- Only the latest 100 are ever shown (docs/reference/limits.md, Logs kept).
DELETE FROM webhook_deliveries d
WHERE d.webhook_id = @webhook_id::uuid
  AND d.id NOT IN (SELECT k.id FROM webhook_deliveries k WHERE k.webhook_id = @webhook_id::uuid ORDER BY k.id DESC LIMIT 100);
