-- Tenants: every run and every skill version belongs to one tenant ('' is the default tenant, a
-- server without tenants). Each statement of a tenant's store is bound to its tenant, so the
-- indexes lead with it. Two tenants may hold the same skill id, even the same content: a version
-- is keyed by (tenant, skill, digest).
ALTER TABLE runs ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
DROP INDEX runs_skill_newest;
DROP INDEX runs_status_newest;
CREATE INDEX runs_tenant_newest ON runs (tenant, started_at DESC, id DESC);
CREATE INDEX runs_tenant_skill_newest ON runs (tenant, skill, started_at DESC, id DESC);
CREATE INDEX runs_tenant_status_newest ON runs (tenant, status, started_at DESC, id DESC);

ALTER TABLE versions ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE version_files ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE version_files DROP CONSTRAINT version_files_skill_digest_fkey;
ALTER TABLE version_files DROP CONSTRAINT version_files_pkey;
ALTER TABLE versions DROP CONSTRAINT versions_pkey;
ALTER TABLE versions ADD PRIMARY KEY (tenant, skill, digest);
ALTER TABLE version_files ADD PRIMARY KEY (tenant, skill, digest, path);
ALTER TABLE version_files ADD FOREIGN KEY (tenant, skill, digest) REFERENCES versions (tenant, skill, digest) ON DELETE CASCADE;
-- A skill never has two active versions, whatever the code above the database does.
DROP INDEX versions_one_active;
CREATE UNIQUE INDEX versions_one_active ON versions (tenant, skill) WHERE status = 'active';
DROP INDEX versions_newest;
CREATE INDEX versions_newest ON versions (tenant, skill, created_at DESC, digest DESC);
