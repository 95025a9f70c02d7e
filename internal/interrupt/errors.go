package interrupt

import (
	"errors"
	"fmt"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

var (
	// ErrRefused is matched (errors.Is) by every *RefusalError: the module was not instrumented
	// and must run as it is, under wazero's own interruption.
	ErrRefused = errors.New("module not instrumented")
	// ErrSelfCheck means an instrumented module failed the check Instrument makes of its own
	// output: a bug here, never the module's fault. The module must run as it is.
	ErrSelfCheck = errors.New("instrumented module failed its self-check")
	// ErrNotInstrumented is Stop's error for a module without the exports Instrument adds.
	ErrNotInstrumented = errors.New("module not instrumented: no stop flag")
)

// RefusalError says why Instrument left a module alone: an opcode or encoding it does not know
// (or knows wazero reads differently from the spec), a malformed section, a start function, a
// name clash, an output past the size bound.
type RefusalError struct {
	Offset int    // byte offset in the module where the reason was found
	Reason string // what is there
}

func (e *RefusalError) Error() string {
	return fmt.Sprintf("not instrumented (byte %d, 0x%x): %s", e.Offset, e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusalError) Unwrap() error { return ErrRefused }

// refuse is a refusal as the walk makes it: a *wasmbin.Error, the reader's own error, so that
// wasmbin.Within can say where each happened. Explain and Instrument return it as a
// *RefusalError (refusal).
func refuse(off int, format string, args ...any) error {
	return wasmbin.Errorf(off, format, args...)
}

// refusal makes the walk's *wasmbin.Error a *RefusalError, where it leaves the package.
func refusal(err error) error {
	if e, ok := err.(*wasmbin.Error); ok {
		return &RefusalError{Offset: e.Offset, Reason: e.Msg}
	}
	return err
}
