//go:build !unix

package outbox

import (
	"os"
	"path/filepath"
)

// lockDir opens a spool directory's .lock file. This system offers no lock that ends with its
// process: processes sharing a spool directory here must not run at once.
func lockDir(dir string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	return os.OpenFile(filepath.Join(dir, ".lock"), flags, 0o600)
}

func unlockDir(f *os.File) { _ = f.Close() }
