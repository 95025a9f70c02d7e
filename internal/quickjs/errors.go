package quickjs

import (
	"fmt"
)

// Kind is what ended a run that failed, in the terms the runtime reports to its callers.
type Kind uint8

const (
	// KindSkillError is an uncaught exception of the skill (or a promise that never settled, or
	// a result that is not JSON), including a recursion too deep for the interpreter's stack.
	KindSkillError Kind = iota + 1
	// KindTimeout is the run's context ending before the skill did.
	KindTimeout
	// KindMemoryLimit is the interpreter running out of memory under its cap.
	KindMemoryLimit
	// KindPermissionDenied is an uncaught PermissionDenied: the host refused an operation and the
	// skill let the refusal end it.
	KindPermissionDenied
	// KindOutputLimit is a result larger than the run's Limits.MaxLineBytes.
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
// other error (the host could not instantiate the reactor, ...) unwrapped from this type: those
// are the host's failures, never the skill's.
type Error struct {
	Kind Kind
	// Name and Message are the JavaScript error's ("TypeError", "boom"); Name is empty when the
	// skill threw something that is not an Error or the run did not end in JavaScript.
	Name, Message string
	// Stack is the JavaScript stack of the exception, when it has one.
	Stack string
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
