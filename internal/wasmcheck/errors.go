package wasmcheck

import (
	"errors"
	"fmt"
	"math"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

var (
	// ErrLimit is matched (errors.Is) by every *LimitError: the module is well-formed but declares
	// more than the limits allow.
	ErrLimit = errors.New("wasm module over a limit")
	// ErrMalformed is matched (errors.Is) by every *FormatError: the module is not well-formed
	// enough to walk, or uses an encoding wazero does not support.
	ErrMalformed = errors.New("malformed wasm module")
)

// Unbounded as a LimitError's Got means the module declares no bound at all (an imported table
// without a maximum).
const Unbounded = math.MaxUint64

// LimitError reports a declared count or size over a limit.
type LimitError struct {
	What  string // what crossed it, e.g. "function 12's body"
	Got   uint64 // what the module declares (Unbounded: nothing)
	Max   uint64 // the limit
	Unit  string // "bytes", "pages", "entries" or "" for a plain count; only for the message
	Field string // the limit as an operator sets it, e.g. "maxFunctionBytes"
	Hint  string // how to fix it
}

func (e *LimitError) Error() string {
	msg := e.Message()
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

// Message is Error without the hint, for callers that show the hint apart.
func (e *LimitError) Message() string {
	got := "unbounded"
	if e.Got != Unbounded {
		got = quantity(e.Got, e.Unit)
	}
	return fmt.Sprintf("%s is %s; at most %s (limit %s)", e.What, got, quantity(e.Max, e.Unit), e.Field)
}

// Unwrap makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Unwrap() error { return ErrLimit }

// FormatError reports a module that cannot be walked: a count that does not fit the bytes that
// follow, a truncated or overlong LEB128, sections out of order, an unknown encoding.
type FormatError struct {
	Offset int    // byte offset in the module where the problem was found
	Msg    string // what is wrong there
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("malformed wasm module at byte %d (0x%x): %s", e.Offset, e.Offset, e.Msg)
}

// Unwrap makes errors.Is(err, ErrMalformed) true.
func (e *FormatError) Unwrap() error { return ErrMalformed }

// malformed is a FormatError as the walk makes it: a *wasmbin.Error, the reader's own error, so
// that wasmbin.Within can say where each happened. Check returns it as a *FormatError.
func malformed(off int, format string, args ...any) error {
	return wasmbin.Errorf(off, format, args...)
}

// formatError makes the walk's *wasmbin.Error a *FormatError, where it leaves the package.
func formatError(err error) error {
	if e, ok := err.(*wasmbin.Error); ok {
		return &FormatError{Offset: e.Offset, Msg: e.Msg}
	}
	return err
}

// quantity formats n in unit for a message: sizes in bytes both exactly and in MiB, pages in MiB.
func quantity(n uint64, unit string) string {
	switch unit {
	case "bytes":
		switch {
		case n < 10<<10:
			return fmt.Sprintf("%d bytes", n)
		case n < 1<<20:
			return fmt.Sprintf("%.1f KiB (%d bytes)", float64(n)/(1<<10), n)
		}
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	case "pages":
		return fmt.Sprintf("%d pages (%.1f MiB)", n, float64(n)/16)
	case "":
		return fmt.Sprintf("%d", n)
	default:
		return fmt.Sprintf("%d %s", n, unit)
	}
}
