//go:build unix

package outbox

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes the lock of a spool directory (its .lock file, made when create is set): held
// by one process at a time, and let go when that process ends, however it ends.
func lockDir(dir string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), flags, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func unlockDir(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}
