-- Tenants: every run and every skill version belongs to one tenant ('' is the default tenant, a
-- server without tenants). Each statement of a tenant's store is bound to its tenant, so the
-- indexes lead with it. Two tenants may hold the same skill id, even the same content: a version
-- is keyed by (tenant, skill, digest), which SQLite can only change by rebuilding the tables.
ALTER TABLE runs ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
DROP INDEX runs_skill_newest;
DROP INDEX runs_status_newest;
CREATE INDEX runs_tenant_newest ON runs (tenant, started_at DESC, id DESC);
CREATE INDEX runs_tenant_skill_newest ON runs (tenant, skill, started_at DESC, id DESC);
CREATE INDEX runs_tenant_status_newest ON runs (tenant, status, started_at DESC, id DESC);

CREATE TABLE versions_by_tenant (
	tenant     TEXT NOT NULL DEFAULT '',
	skill      TEXT NOT NULL,
	digest     TEXT NOT NULL,
	version    TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL CHECK (status IN ('draft', 'pending', 'active', 'deprecated', 'yanked', 'rejected')),
	source     TEXT NOT NULL DEFAULT '',
	grant_json TEXT NOT NULL DEFAULT '{}',
	diff       TEXT NOT NULL DEFAULT '[]',
	created_by TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	updated_by TEXT NOT NULL DEFAULT '',
	updated_at INTEGER,
	note       TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (tenant, skill, digest)
);
INSERT INTO versions_by_tenant (tenant, skill, digest, version, status, source, grant_json, diff, created_by, created_at, updated_by, updated_at, note)
	SELECT '', skill, digest, version, status, source, grant_json, diff, created_by, created_at, updated_by, updated_at, note FROM versions;
CREATE TABLE version_files_by_tenant (
	tenant TEXT NOT NULL DEFAULT '',
	skill  TEXT NOT NULL,
	digest TEXT NOT NULL,
	path   TEXT NOT NULL,
	blob   TEXT NOT NULL REFERENCES blobs (sha256),
	PRIMARY KEY (tenant, skill, digest, path),
	FOREIGN KEY (tenant, skill, digest) REFERENCES versions_by_tenant (tenant, skill, digest) ON DELETE CASCADE
);
INSERT INTO version_files_by_tenant (tenant, skill, digest, path, blob)
	SELECT '', skill, digest, path, blob FROM version_files;
DROP TABLE version_files;
DROP TABLE versions;
ALTER TABLE versions_by_tenant RENAME TO versions;
ALTER TABLE version_files_by_tenant RENAME TO version_files;
-- A skill never has two active versions, whatever the code above the database does.
CREATE UNIQUE INDEX versions_one_active ON versions (tenant, skill) WHERE status = 'active';
CREATE INDEX versions_newest ON versions (tenant, skill, created_at DESC, digest DESC);
CREATE INDEX version_files_blob ON version_files (blob);
