-- Every change of a version (recorded, or moved from one status to another) is an event: who
-- made it, when, and what they said. The events are the audit trail of each version, and, read
-- in the order of seq, the feed a runtime follows to keep every version in memory. A replica
-- sees another's changes by reading the events after the last it saw.
CREATE TABLE version_events (
	seq    INTEGER PRIMARY KEY AUTOINCREMENT,
	tenant TEXT NOT NULL,
	skill  TEXT NOT NULL,
	digest TEXT NOT NULL,
	action TEXT NOT NULL,
	status TEXT NOT NULL,
	actor  TEXT NOT NULL DEFAULT '',
	at     INTEGER NOT NULL,
	note   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX version_events_feed ON version_events (tenant, seq);
CREATE INDEX version_events_of ON version_events (tenant, skill, digest, seq);
-- The versions recorded before: their recording, in the order they were recorded, and the last
-- move each made (its earlier ones were not kept, nor the status it was recorded in: '').
INSERT INTO version_events (tenant, skill, digest, action, status, actor, at, note)
	SELECT tenant, skill, digest, 'record', CASE WHEN updated_at IS NULL THEN status ELSE '' END, created_by, created_at, '' FROM versions ORDER BY created_at, skill, digest;
INSERT INTO version_events (tenant, skill, digest, action, status, actor, at, note)
	SELECT tenant, skill, digest, 'move', status, updated_by, updated_at, note FROM versions WHERE updated_at IS NOT NULL ORDER BY updated_at, skill, digest;
