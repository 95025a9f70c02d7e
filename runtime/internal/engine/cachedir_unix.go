//go:build unix

package engine

import (
	"io/fs"
	"syscall"
)

// checkModes: on Unix the permission bits are the access control, so they are checked.
const checkModes = true

// fileOwner returns the uid owning fi's file.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
