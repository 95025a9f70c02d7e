-- The history of runs. Times are Unix nanoseconds (UTC); args and usage are JSON text.
CREATE TABLE runs (
	id            TEXT PRIMARY KEY,
	skill         TEXT NOT NULL,
	version       TEXT NOT NULL DEFAULT '',
	digest        TEXT NOT NULL DEFAULT '',
	face          TEXT NOT NULL DEFAULT '',
	caller        TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted')),
	error_kind    TEXT NOT NULL DEFAULT '',
	error_message TEXT NOT NULL DEFAULT '',
	args          TEXT,
	args_sha256   TEXT NOT NULL DEFAULT '',
	usage         TEXT NOT NULL DEFAULT '{}',
	duration_ms   REAL NOT NULL DEFAULT 0,
	started_at    INTEGER NOT NULL,
	finished_at   INTEGER,
	owner         TEXT NOT NULL DEFAULT '',
	lease_until   INTEGER
);
CREATE INDEX runs_newest ON runs (started_at DESC, id DESC);
CREATE INDEX runs_skill_newest ON runs (skill, started_at DESC, id DESC);
CREATE INDEX runs_status_newest ON runs (status, started_at DESC, id DESC);
CREATE INDEX runs_leases ON runs (lease_until) WHERE status = 'running';
CREATE INDEX runs_owners ON runs (owner) WHERE status = 'running';
