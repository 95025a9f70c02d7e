-- A run's W3C trace id, when its span had one, so that a reader of the history (the console,
-- an operator) finds the run's trace in the tracing backend. '' for the runs before.
ALTER TABLE runs ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
