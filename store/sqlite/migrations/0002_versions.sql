-- Skill versions: one row per content of a skill (keyed by the digest of its tree), its status
-- moving by the runtime's transitions. Times are Unix nanoseconds (UTC); grant_json and diff are
-- JSON text.
CREATE TABLE versions (
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
	PRIMARY KEY (skill, digest)
);
-- A skill never has two active versions, whatever the code above the database does.
CREATE UNIQUE INDEX versions_one_active ON versions (skill) WHERE status = 'active';
CREATE INDEX versions_newest ON versions (skill, created_at DESC, digest DESC);

-- Content-addressed bytes, shared by every version (and, later, artifact) that holds them.
CREATE TABLE blobs (
	sha256 TEXT PRIMARY KEY,
	size   INTEGER NOT NULL,
	data   BLOB NOT NULL
);

-- The files of each version: a path in the skill and the blob it holds.
CREATE TABLE version_files (
	skill  TEXT NOT NULL,
	digest TEXT NOT NULL,
	path   TEXT NOT NULL,
	blob   TEXT NOT NULL REFERENCES blobs (sha256),
	PRIMARY KEY (skill, digest, path),
	FOREIGN KEY (skill, digest) REFERENCES versions (skill, digest) ON DELETE CASCADE
);
CREATE INDEX version_files_blob ON version_files (blob);
