//go:build !unix

package skillmd

import "io/fs"

// inode is 0 where the platform has none to offer: size, modification time and mode tell files
// apart.
func inode(fs.FileInfo) uint64 { return 0 }
