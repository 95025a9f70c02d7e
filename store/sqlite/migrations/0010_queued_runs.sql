-- A node of a cluster records a run it accepted for the cluster's queue as 'queued' until a node
-- starts it, so every node reads it meanwhile. SQLite cannot change a CHECK constraint in place:
-- the table is rebuilt, its rows and indexes as they were. Queued rows hold no owner; their
-- lease is when the sweep gives up on them, found through an index of their own.
CREATE TABLE runs_with_queued (
	id            TEXT PRIMARY KEY,
	skill         TEXT NOT NULL,
	version       TEXT NOT NULL DEFAULT '',
	digest        TEXT NOT NULL DEFAULT '',
	face          TEXT NOT NULL DEFAULT '',
	caller        TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'interrupted')),
	error_kind    TEXT NOT NULL DEFAULT '',
	error_message TEXT NOT NULL DEFAULT '',
	args          TEXT,
	args_sha256   TEXT NOT NULL DEFAULT '',
	usage         TEXT NOT NULL DEFAULT '{}',
	duration_ms   REAL NOT NULL DEFAULT 0,
	started_at    INTEGER NOT NULL,
	finished_at   INTEGER,
	owner         TEXT NOT NULL DEFAULT '',
	lease_until   INTEGER,
	tenant        TEXT NOT NULL DEFAULT '',
	visible_to    TEXT NOT NULL DEFAULT '',
	result        TEXT,
	logs          TEXT,
	logs_dropped  INTEGER NOT NULL DEFAULT 0,
	trimmed       INTEGER NOT NULL DEFAULT 0
);
INSERT INTO runs_with_queued (id, skill, version, digest, face, caller, status, error_kind, error_message, args, args_sha256,
		usage, duration_ms, started_at, finished_at, owner, lease_until, tenant, visible_to, result, logs, logs_dropped, trimmed)
	SELECT id, skill, version, digest, face, caller, status, error_kind, error_message, args, args_sha256,
		usage, duration_ms, started_at, finished_at, owner, lease_until, tenant, visible_to, result, logs, logs_dropped, trimmed FROM runs;
DROP TABLE runs;
ALTER TABLE runs_with_queued RENAME TO runs;
CREATE INDEX runs_leases ON runs (lease_until) WHERE status = 'running';
CREATE INDEX runs_owners ON runs (owner) WHERE status = 'running';
CREATE INDEX runs_queued ON runs (lease_until) WHERE status = 'queued';
CREATE INDEX runs_tenant_newest ON runs (tenant, started_at DESC, id DESC);
CREATE INDEX runs_tenant_skill_newest ON runs (tenant, skill, started_at DESC, id DESC);
CREATE INDEX runs_tenant_status_newest ON runs (tenant, status, started_at DESC, id DESC);
