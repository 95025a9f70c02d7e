-- A version of a skill of a user's own (visibility user) names its user, so that a tenant's
-- admins can list what waits for their review and say whose it is ('' is the tenant's).
ALTER TABLE versions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
-- The review queue: a tenant's versions in one status, newest first.
CREATE INDEX versions_by_status ON versions (tenant, status, created_at DESC, skill, digest);
