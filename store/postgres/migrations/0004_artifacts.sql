-- The files runs left in their output directories: one row per file of a run, its bytes a blob
-- shared with every other artifact and version of the same content. There is no foreign key to
-- runs: a runtime may keep artifacts without recording runs, and a run's artifacts are kept
-- before its end is recorded. Each artifact is its tenant's, like the run that left it: a
-- tenant's store reads and writes its own. Times are Unix nanoseconds (UTC).
CREATE TABLE artifacts (
	tenant     TEXT NOT NULL DEFAULT '',
	run_id     TEXT NOT NULL,
	name       TEXT NOT NULL,
	size       BIGINT NOT NULL,
	sha256     TEXT NOT NULL REFERENCES blobs (sha256),
	media_type TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (tenant, run_id, name)
);
CREATE INDEX artifacts_blob ON artifacts (sha256);
