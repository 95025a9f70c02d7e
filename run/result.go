package run

import (
	"encoding/json"

	"github.com/skillbox-dev/skillbox/artifact"
	"time"
)

// Result is the outcome of one run, in the shape the CLI's --json and the HTTP API print.
type Result struct {
	RunID   string `json:"run_id"`
	Skill   string `json:"skill"`
	Version string `json:"version"`
	// Digest is the identity of the skill version that ran (see Skill.Digest).
	Digest  string `json:"digest,omitempty"`
	Success bool   `json:"success"`
	// Status is how the run ended, in the run history's words: StatusSucceeded, StatusFailed or
	// StatusInterrupted (see Settle). Success says the same for the first two.
	Status string `json:"status,omitempty"`
	// Result is the skill's result value (JSON), when it succeeded.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ResultError    `json:"error,omitempty"`
	Logs   []LogEntry      `json:"logs"`
	// LogsDropped counts log entries past the run's maxLogBytes.
	LogsDropped int     `json:"logs_dropped,omitempty"`
	DurationMs  float64 `json:"duration_ms"`
	Usage       Usage   `json:"usage"`
	// Artifacts are the files the run left in its output directory (see OutputMount), by name;
	// a failed run's too.
	Artifacts []artifact.Artifact `json:"artifacts,omitempty"`
	// TraceID is the W3C trace the run's span belongs to (32 hex digits), when it has one: the
	// caller sent a traceparent, or the runtime traces (docs/observability.md).
	TraceID string `json:"trace_id,omitempty"`
}

// The statuses of a finished run (Result.Status), the same words the run history keeps.
const (
	StatusSucceeded   = "succeeded"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted" // its process stopped before it finished (KindInterrupted)
)

// Settle sets r.Status once r is final (see StatusOf).
func (r *Result) Settle() { r.Status = StatusOf(r) }

// StatusOf is how a final result's run ended: the one rule for a run's status, which the run
// history keeps too.
func StatusOf(r *Result) string {
	switch {
	case r.Success:
		return StatusSucceeded
	case r.Error != nil && r.Error.Kind == KindInterrupted:
		return StatusInterrupted
	default:
		return StatusFailed
	}
}

// ResultError is a failed run's error: a kind to branch on and a message to read.
type ResultError struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

// LogEntry is one line of a run's log.
type LogEntry struct {
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	// Source is "" for the skill's log calls, "stdout", "stderr" or "host".
	Source  string `json:"source,omitempty"`
	Message string `json:"message"`
}

// Usage is what a run consumed and touched.
type Usage struct {
	// PeakMemoryBytes is the largest total size of the instance's linear memories.
	PeakMemoryBytes uint64   `json:"peak_memory_bytes"`
	Fetches         int      `json:"fetches"`
	BytesIn         int64    `json:"bytes_in"`
	BytesOut        int64    `json:"bytes_out"`
	HostsContacted  []string `json:"hosts_contacted,omitempty"`
	FilesRead       []string `json:"files_read,omitempty"`
	FilesWritten    []string `json:"files_written,omitempty"`
	BytesWritten    int64    `json:"bytes_written"`
	// Denied lists every call the grant refused, in order, such as
	// `fetch http://10.0.0.1/: address 10.0.0.1 is private ...`.
	Denied []string `json:"denied,omitempty"`
	// Asked lists the run's permission requests and what became of each.
	Asked []Asked `json:"asked,omitempty"`
}
