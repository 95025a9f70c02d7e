-- GET /v1/runs?caller= lists one caller's runs: an index of a tenant's runs by caller, as by
-- skill and by status, so that a caller with few runs among many is one seek, not a walk of
-- every newer run of the tenant. A run's end leaves its caller as its start wrote it, so the
-- index costs a start one more entry and an end nothing (on SQLite; on PostgreSQL an end's
-- update already writes every index of the row).
CREATE INDEX runs_tenant_caller_newest ON runs (tenant, caller, started_at DESC, id DESC);
