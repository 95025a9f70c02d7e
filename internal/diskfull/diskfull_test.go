package diskfull

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// The kernel's ENOSPC, however wrapped, and SQLite's "database or disk is full" are a full
// disk; other failures are not, and Name leaves them as they are.
func TestIs(t *testing.T) {
	full := []error{
		&os.PathError{Op: "write", Path: "/data/x", Err: syscall.ENOSPC},
		fmt.Errorf("put: %w", &os.PathError{Op: "write", Path: "/data/x", Err: syscall.ENOSPC}),
		errors.New("record runs: sqlite /data/skillbox.db: commit: sqlite3: database or disk is full"),
	}
	for _, err := range full {
		if !Is(err) {
			t.Errorf("%v: not a full disk", err)
		}
		named := Name(err, "the run's artifacts")
		if !strings.HasPrefix(named.Error(), "no space left on the device for the run's artifacts: ") || !errors.Is(named, err) {
			t.Errorf("named %v", named)
		}
		if again := Name(named, "x"); again != named {
			t.Errorf("named twice: %v", again)
		}
	}
	for _, err := range []error{nil, errors.New("connection refused"), &os.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}} {
		if Is(err) || Name(err, "x") != err {
			t.Errorf("%v taken for a full disk", err)
		}
	}
}
