// Package safefile opens files that untrusted parties may have put in place (skill packages), so
// that a FIFO, a device or a symlink to one can neither block the open nor be read forever.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is matched by the error of Open for anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file (after following symlinks). O_NONBLOCK
// keeps the open of a FIFO from waiting for a writer; the Stat of the open file, not of the path,
// is what is checked, so the file cannot be swapped in between. The caller closes the file and
// bounds its reads.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w (%s)", ErrNotRegular, st.Mode().Type())
	}
	return f, st, nil
}
