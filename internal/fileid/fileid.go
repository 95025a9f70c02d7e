// Package fileid tells a file apart from one put in its place, for the caches that remember a
// digest per file (the runtime's version digests, the published skills' files): with its size,
// modification time (and mode), a file's inode number says it is still the file that was read.
package fileid
