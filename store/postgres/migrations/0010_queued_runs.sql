-- A node of a cluster records a run it accepted for the cluster's queue as 'queued' until a node
-- starts it, so every node reads it meanwhile. The constraint is widened without reading the
-- table (NOT VALID): every row already met the narrower one. Queued rows hold no owner; their
-- lease is when the sweep gives up on them, found through an index of their own.
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
	CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'interrupted')) NOT VALID;
CREATE INDEX runs_queued ON runs (lease_until) WHERE status = 'queued';
