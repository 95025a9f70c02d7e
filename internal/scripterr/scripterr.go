// Package scripterr names the ways a script run fails for a reason of the skill's making, as both
// script runners (internal/quickjs, internal/cpython) report them and the runtime maps them to
// its error kinds: one list, so the two interpreters cannot drift apart.
package scripterr

import "fmt"

// Kind is what ended a run that failed.
type Kind uint8

const (
	// SkillError is an uncaught exception of the skill (or a result that is not JSON, a
	// recursion too deep for the interpreter's stack, a trap of the interpreter).
	SkillError Kind = iota + 1
	// Timeout is the run's context ending before the skill did.
	Timeout
	// MemoryLimit is the interpreter running out of memory under its cap (an uncaught
	// MemoryError or InternalError: out of memory too).
	MemoryLimit
	// PermissionDenied is an uncaught PermissionDenied: the host refused an operation and the
	// skill let the refusal end it.
	PermissionDenied
	// OutputLimit is a result larger than the runner's bound.
	OutputLimit
)

var names = [...]string{SkillError: "skill_error", Timeout: "timeout", MemoryLimit: "memory_limit",
	PermissionDenied: "permission_denied", OutputLimit: "output_limit"}

// String is the kind's name, as the runtime's error kinds spell it.
func (k Kind) String() string {
	if int(k) < len(names) && names[k] != "" {
		return names[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Error is a run that failed for a reason of the skill's making (see Kind). A runner returns any
// other error (it could not instantiate its interpreter, ...) as another type: those are the
// caller's or the host's failures, never the skill's.
type Error struct {
	Kind Kind
	// Name and Message are the exception's ("TypeError", "boom"); Name is empty when the skill
	// raised something that is not an error object, or the run did not end in the language.
	Name, Message string
	// Stack is the exception's stack, when the runner keeps it apart from the run's logs.
	Stack string
	// Syntax is where the SyntaxError the run ended in is in its file, when it is one and the
	// runner knows.
	Syntax *Syntax
	// Err is the underlying Go error (the context's error for a timeout, the trap), if any.
	Err error
}

// Syntax places a syntax error in its file.
type Syntax struct {
	Msg  string // the error alone, without its place: "invalid syntax"
	Line int    // 1-based; 0 when not known
	// Column is 1-based, 0 when not known, and in the runner's unit: CPython's offset into the
	// line's bytes for a file it compiled (see runtime's charColumn).
	Column int
}

func (e *Error) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("%s: %s: %s", e.Kind, e.Name, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }
