package run

import (
	"errors"
)

// ProgramOutput is a program run's result: Result.Result holds it as JSON.
type ProgramOutput struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// StdoutDropped and StderrDropped count the bytes cut past maxOutputBytes (each stream has
	// its own).
	StdoutDropped int64 `json:"stdout_dropped,omitempty"`
	StderrDropped int64 `json:"stderr_dropped,omitempty"`
}

// ErrNoProgram is matched by the error of a run of a program a skill does not have (kind
// not_found).
var ErrNoProgram = errors.New("no such program")
