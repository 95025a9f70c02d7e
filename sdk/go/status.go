package skill

import (
	"errors"
	"strconv"
)

// Status is the first byte of every host reply (docs/abi.md §3). It is exposed so that a
// skill can report exactly what the host said; most code only needs errors.Is with the
// sentinels below.
type Status uint8

// The reply statuses of skillbox/v1. Their values are part of the ABI and never change.
const (
	OK       Status = 0 // done; the payload is the value
	NotFound Status = 1 // the variable is unset, the file does not exist
	Denied   Status = 2 // the run's grant does not allow it
	Invalid  Status = 3 // the request is malformed (bad JSON, URL or path)
	Limit    Status = 4 // a per-run quota was reached
	Failed   Status = 5 // allowed, but it failed (connection refused, DNS, I/O)
)

// String returns the ABI's name for s in lower case ("ok", "not_found", ...), the
// spelling shared by every guest language's conformance output.
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case NotFound:
		return "not_found"
	case Denied:
		return "denied"
	case Invalid:
		return "invalid"
	case Limit:
		return "limit"
	case Failed:
		return "failed"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// Sentinel errors, one per failure status, for errors.Is. A *Error matches the sentinel
// of its Status, so skills branch on the kind of failure without string matching.
var (
	ErrNotFound = errors.New("not found")
	ErrDenied   = errors.New("denied")
	ErrInvalid  = errors.New("invalid")
	ErrLimit    = errors.New("limit")
	ErrFailed   = errors.New("failed")
)

// sentinel returns the sentinel error for s, or nil for OK and unknown statuses.
func (s Status) sentinel() error {
	switch s {
	case NotFound:
		return ErrNotFound
	case Denied:
		return ErrDenied
	case Invalid:
		return ErrInvalid
	case Limit:
		return ErrLimit
	case Failed:
		return ErrFailed
	}
	return nil
}

// Error is a host call that did not succeed. Its text is written for the model that
// reads the skill's result, e.g. `fetch: denied: host "x" is not on the grant`.
type Error struct {
	Op      string // the host call: "fetch", "env", "read_file", "write_file"
	Status  Status // why it failed; never OK
	Message string // the host's explanation, may be empty
}

// Error returns "op: status: message".
func (e *Error) Error() string {
	kind := e.Status.String()
	if err := e.Status.sentinel(); err != nil {
		kind = err.Error()
	}
	s := e.Op + ": " + kind
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is the sentinel of e's status, so that
// errors.Is(err, skill.ErrDenied) works through any wrapping.
func (e *Error) Is(target error) bool {
	s := e.Status.sentinel()
	return s != nil && s == target
}
