package safefile

import (
	"os"
	"path/filepath"
)

// WriteAtomic writes data to path through a temporary file in the same directory, renamed into
// place: a reader (a reload, a verify, another process) sees the old file or the new one, never
// half of one, and a failed write leaves the old file as it was. The file gets mode perm.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
