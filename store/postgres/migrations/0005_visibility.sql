-- A run of a skill of a user's own (visibility user) is visible to that user alone, and to the
-- tenant's admins: visible_to names the user, '' (every run before this migration) the tenant.
ALTER TABLE runs ADD COLUMN visible_to TEXT NOT NULL DEFAULT '';
