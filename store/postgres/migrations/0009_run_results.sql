-- A finished run's record keeps what its client was answered, within the policy's bound: the
-- result value and the log entries (JSON), how many entries the run dropped, and whether the
-- record was trimmed to fit. GET /v1/runs/{id} reads the same after a restart as before.
ALTER TABLE runs ADD COLUMN result TEXT;
ALTER TABLE runs ADD COLUMN logs TEXT;
ALTER TABLE runs ADD COLUMN logs_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN trimmed INTEGER NOT NULL DEFAULT 0;
