-- Reading the change log by transaction visibility: a poll asks for the
-- entries of the transactions its previous snapshot did not see. Ids are
-- drawn before commit, so an entry can commit after one with a larger id;
-- reading by id alone would skip it for good.
-- +goose Up
CREATE INDEX change_log_xid_idx ON change_log (xid);

-- +goose Down
DROP INDEX change_log_xid_idx;
