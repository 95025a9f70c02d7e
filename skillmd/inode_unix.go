//go:build unix

package skillmd

import (
	"io/fs"
	"syscall"
)

// inode is a file's inode number: with its size, modification time and mode, what tells a file
// apart from one that was put in its place.
func inode(fi fs.FileInfo) uint64 {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
