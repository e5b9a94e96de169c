-- The number of distinct users per flag and value, kept by the fold beside
-- impression_variant_users: exposure reads counted that table's
-- rows for the flag on every read, a cost that grew with the users (a third
-- of a second at 250,000 users of a flag) whatever the tail. The fold adds
-- the rows it inserts into impression_variant_users; retention subtracts
-- the ones it deletes (queries/impressions.sql).

-- +goose Up
CREATE TABLE impression_value_users (
    environment_id uuid   NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    flag_key       text   NOT NULL,
    value          text   NOT NULL,
    users          bigint NOT NULL
);
CREATE UNIQUE INDEX impression_value_users_key ON impression_value_users (environment_id, flag_key, md5(value));

INSERT INTO impression_value_users (environment_id, flag_key, value, users)
SELECT v.environment_id, v.flag_key, v.value, count(*)
FROM impression_variant_users v
WHERE EXISTS (SELECT 1 FROM environments e WHERE e.id = v.environment_id)
GROUP BY v.environment_id, v.flag_key, v.value;

-- +goose Down
DROP TABLE impression_value_users;
