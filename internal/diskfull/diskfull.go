// Package diskfull tells a failure to write because a disk is full from the others, whichever
// layer reports it: the kernel's ENOSPC (or EDQUOT, a quota that is just as full), or SQLite's
// SQLITE_FULL, which its drivers report as text. Every place that writes names it so: "no space
// left on the device", the words an operator searches for.
package diskfull

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Is says whether err is a write that failed because the disk (or the user's quota on it) is
// full.
func Is(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.Errno(edquot)) {
		return true
	}
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "no space left") || strings.Contains(m, "database or disk is full") || strings.Contains(m, "disk quota exceeded")
}

// nearlyFull is the free space under which a filesystem counts as full: a write of a page or a
// WAL frame, and the metadata around it, does not fit.
const nearlyFull = 256 << 10

// NameAt is Name for a failure of a write under path that may not say its cause (SQLite over a
// VFS says "disk I/O error"): when the filesystem holding path is full, that is the cause.
func NameAt(err error, what, path string) error {
	if err == nil {
		return nil
	}
	if !Is(err) && strings.Contains(strings.ToLower(err.Error()), "i/o error") && path != "" && Full(path) {
		return &Error{What: what, Err: err}
	}
	return Name(err, what)
}

// Error is a write refused because the disk is full, naming what was being written.
type Error struct {
	// What was written: "the run's artifacts", "the run history".
	What string
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("no space left on the device for %s: %v", e.What, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Name returns err as an *Error about what when the disk is full, else err itself.
func Name(err error, what string) error {
	var de *Error
	if !Is(err) || errors.As(err, &de) {
		return err
	}
	return &Error{What: what, Err: err}
}
