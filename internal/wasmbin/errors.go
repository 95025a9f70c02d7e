package wasmbin

import (
	"errors"
	"fmt"
)

// Error is a module that cannot be read as wazero reads it, at Offset. It is the one error of the
// walks over a module, the Reader's and its callers' own, so that Within can say where each
// happened; a caller that exports an error type (a refusal, a format error) converts it there.
type Error struct {
	Offset int    // byte offset in the module where the problem was found
	Msg    string // what is wrong there
}

func (e *Error) Error() string {
	return fmt.Sprintf("byte %d (0x%x): %s", e.Offset, e.Offset, e.Msg)
}

// Errorf is an *Error at off.
func Errorf(off int, format string, args ...any) error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Within prefixes an *Error's message with where it happened, and returns any other error as it
// is (a caller's limit error names that itself). Only called on the error path, so the
// formatting costs nothing otherwise.
func Within(err error, format string, args ...any) error {
	var e *Error
	if errors.As(err, &e) {
		e.Msg = fmt.Sprintf(format, args...) + ": " + e.Msg
	}
	return err
}
