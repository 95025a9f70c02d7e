package cpython

import "fmt"

// Kind is what ended a run that failed, in the terms the runtime reports to its callers (the
// same names as the QuickJS runner's).
type Kind uint8

const (
	// KindSkillError is an uncaught exception of the skill (its traceback went to the logs), a
	// result that is not JSON, or the interpreter trapping (a recursion too deep for its stack).
	KindSkillError Kind = iota + 1
	// KindTimeout is the run's context ending before the skill did.
	KindTimeout
	// KindMemoryLimit is an uncaught MemoryError, or the interpreter running out of linear memory
	// under its cap.
	KindMemoryLimit
	// KindPermissionDenied is an uncaught skillbox.PermissionDenied: the host refused an
	// operation and the skill let the refusal end it.
	KindPermissionDenied
	// KindOutputLimit is execute's result larger than Limits.MaxResultBytes.
	KindOutputLimit
)

var kindNames = [...]string{KindSkillError: "skill_error", KindTimeout: "timeout",
	KindMemoryLimit: "memory_limit", KindPermissionDenied: "permission_denied", KindOutputLimit: "output_limit"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Error is a run that failed for a reason of the skill's making (see Kind). Run returns any
// other error (a Program that is not valid, the interpreter failing to instantiate) as another
// type: those are the caller's or the host's failures, never the skill's.
type Error struct {
	Kind Kind
	// Name and Message are the Python exception's ("ValueError", "boom"); Name is empty when
	// the run did not end in Python (a timeout, a trap).
	Name, Message string
	// Err is the underlying Go error (the context's error for a timeout, the trap), if any.
	Err error
}

func (e *Error) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("%s: %s: %s", e.Kind, e.Name, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }
