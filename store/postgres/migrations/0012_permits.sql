-- A permit is a person's answer "allow this for a while" to a run's permission request: what it
-- allows (kind, target, access), for which skill version and caller ('' for every caller of the
-- tenant), from at until until_at (Unix nanoseconds), who allowed it and which run and request
-- it answered. Every replica of the tenant finds it before it asks a person again, and the rows
-- are the audit trail of what people allowed. A revoked permit keeps its row, until_at moved to
-- when it was revoked and revoked_by saying who.
CREATE TABLE permits (
	tenant     TEXT NOT NULL,
	id         TEXT NOT NULL,
	skill      TEXT NOT NULL,
	digest     TEXT NOT NULL,
	caller     TEXT NOT NULL DEFAULT '',
	kind       TEXT NOT NULL,
	target     TEXT NOT NULL,
	access     TEXT NOT NULL DEFAULT '',
	at         BIGINT NOT NULL,
	until_at   BIGINT NOT NULL,
	by_who     TEXT NOT NULL,
	run_id     TEXT NOT NULL DEFAULT '',
	request_id TEXT NOT NULL DEFAULT '',
	revoked_by TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (tenant, id)
);
CREATE INDEX permits_of ON permits (tenant, skill, digest, kind, target);
CREATE INDEX permits_newest ON permits (tenant, at);
