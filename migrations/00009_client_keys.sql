-- Client keys and client-side flags (docs/reference/identity.md, Client
-- keys). An SDK key is a 'server' key (sk_live_, for servers) or a 'client'
-- key (pk_live_, publishable), which may only evaluate the flags marked
-- client_side and report exposures. Existing keys are server keys; existing
-- flags stay hidden from client keys until someone marks them.

-- +goose Up
ALTER TABLE sdk_keys ADD COLUMN kind text NOT NULL DEFAULT 'server'
    CONSTRAINT sdk_keys_kind_check CHECK (kind IN ('server', 'client'));
ALTER TABLE flags ADD COLUMN client_side boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE flags DROP COLUMN client_side;
ALTER TABLE sdk_keys DROP COLUMN kind;
