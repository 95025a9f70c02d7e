package runtime

import (
	"encoding/json"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// Result is the outcome of one run, in the shape the CLI's --json and the HTTP API print.
type Result struct {
	RunID   string `json:"run_id"`
	Skill   string `json:"skill"`
	Version string `json:"version"`
	// Digest is the identity of the skill version that ran (see Skill.Digest).
	Digest  string `json:"digest,omitempty"`
	Success bool   `json:"success"`
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
	Artifacts []Artifact `json:"artifacts,omitempty"`
}

// ResultError is a failed run's error: a kind to branch on and a message to read.
type ResultError struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

// LogEntry is one line of a run's log.
type LogEntry = hostfuncs.LogEntry

// Usage is what a run consumed and touched.
type Usage struct {
	// PeakMemoryBytes is the largest total size of the instance's linear memories.
	PeakMemoryBytes uint64 `json:"peak_memory_bytes"`
	hostfuncs.Usage
}
