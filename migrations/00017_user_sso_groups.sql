-- The groups of a user's most recent single sign-on (docs/scim.md, Groups and
-- roles).
--
-- Group mappings and admin groups apply to the union of two sources: the
-- SCIM groups the user is a member of (scim_group_members, 00015) and the
-- groups claim of their latest OIDC sign-in. The claim used to be applied at
-- the sign-in and forgotten; now a SCIM group change recomputes the user's
-- roles at once and needs the claim's half of the union, so users.sso_groups
-- keeps it. Without it, a SCIM change would take away memberships the claim
-- gave, and a sign-in whose claim lacks a group (many providers send no
-- groups claim when they provision through SCIM) would take away memberships
-- SCIM gave.
--
-- A sign-in overwrites it with that sign-in's claim; a SCIM DELETE of the
-- user empties it along with their other memberships. Existing users start
-- with none: their next sign-in fills it.

-- +goose Up
ALTER TABLE users ADD COLUMN sso_groups text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE users DROP COLUMN sso_groups;
