//go:build unix

package diskfull

import (
	"path/filepath"
	"syscall"
)

const edquot = syscall.EDQUOT

// Full says whether the filesystem holding path (a file, or a directory) has no room left for
// a write: less than nearlyFull bytes free to this user. It is how a failure a layer reports
// without its cause (SQLite's "disk I/O error") is told to be a full disk.
func Full(path string) bool {
	var st syscall.Statfs_t
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := syscall.Statfs(p, &st); err == nil {
			return uint64(st.Bavail)*uint64(st.Bsize) < nearlyFull
		}
	}
	return false
}
