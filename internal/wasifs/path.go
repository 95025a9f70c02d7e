package wasifs

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// maxPath bounds a guest path, as PATH_MAX does on Linux: os.Root walks a path one component at
// a time, so a longer one only costs the host more opens.
const maxPath = 4096

// cleanPath checks a path the guest handed in and returns it lexically cleaned. wazero already
// cleans and refuses ".." past the preopen; this checks again so that the FS is safe on its own
// and for every method, not only the ones wazero cleans for. os.Root then checks each
// component and symlink against the root.
//
// A trailing slash is kept: it asks that the last component be a directory.
func cleanPath(p string) (string, sys.Errno) {
	switch {
	case p == "":
		return "", sys.ENOENT
	case len(p) > maxPath:
		return "", sys.ENAMETOOLONG
	case strings.IndexByte(p, 0) >= 0:
		return "", sys.EINVAL
	case p[0] == '/':
		return "", sys.EPERM
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", sys.EPERM
	}
	if p[len(p)-1] == '/' && c != "." {
		c += "/"
	}
	return c, 0
}

// inside reports whether target, a symlink's text found at link (a cleaned path), names a path
// inside the root without leaving it.
func inside(link, target string) bool {
	if target == "" || target[0] == '/' {
		return false
	}
	c := path.Join(path.Dir(strings.TrimSuffix(link, "/")), target)
	return c != ".." && !strings.HasPrefix(c, "../")
}

// errnoOf maps an error of os.Root or os.File to the errno the guest sees.
func errnoOf(err error) sys.Errno {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		switch en {
		case syscall.ENXIO, syscall.ENODEV:
			// Opening a FIFO for writing without a reader, or a device without a driver:
			// special files are refused, so say so.
			return sys.EACCES
		}
		return sys.UnwrapOSError(en)
	}
	if errors.Is(err, fs.ErrClosed) {
		return sys.EBADF
	}
	// What is left is os.Root refusing a path or a symlink that leaves the root ("path escapes
	// from parent", not exported): deny, the way a directory without search permission does.
	return sys.EACCES
}
