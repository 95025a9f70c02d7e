//go:build unix

package fileid

import (
	"io/fs"
	"syscall"
)

// Inode is fi's inode number.
func Inode(fi fs.FileInfo) uint64 {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
