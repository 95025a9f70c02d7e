package wasifs

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// Tmp is a run's private /tmp: a fresh, empty, writable host directory, made when the guest
// first writes to it. Most runs never do, and the directory's mkdir and removal were a fifth
// of a small Python run. Until then Tmp answers as the empty directory it would be: every
// guest opens its root at start (WASI's preopens), and reads of a name find nothing.
type Tmp struct {
	sys.UnimplementedFS

	opts   Options
	failed func(error)
	born   int64 // the empty root's times until it is made

	mu     sync.Mutex
	fs     *FS // the mount, once made
	err    sys.Errno
	closed bool
}

var _ sys.FS = (*Tmp)(nil)

// PrivateTmp returns a private /tmp mounted with opts (Writable is implied; the budget is
// required as for [Dir]), made on the guest's first call. cleanup closes the mount and removes
// the directory with all the guest left in it, directories it made read-only included; call
// it once the run is over (calling it again does nothing). When the directory cannot be made
// (the host's temporary directory is not writable), every call of the guest on /tmp fails
// with EIO, and failed (when not nil) is told why, once.
//
// # Errors
//
// [ErrOptions] for a missing budget.
func PrivateTmp(opts Options, failed func(error)) (tmp *Tmp, cleanup func(), err error) {
	opts.Writable = true
	if err := opts.validate("private /tmp"); err != nil {
		return nil, nil, err
	}
	t := &Tmp{opts: opts, failed: failed, born: time.Now().UnixNano()}
	return t, t.cleanup, nil
}

// mount returns the mount, making its directory on the first call.
func (t *Tmp) mount() (*FS, sys.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return nil, sys.EBADF
	case t.fs != nil || t.err != 0:
		return t.fs, t.err
	}
	dir, err := os.MkdirTemp("", "skillbox-tmp-")
	if err == nil {
		if t.fs, err = Dir(dir, t.opts); err != nil {
			_ = removeTree(dir)
		}
	}
	if err != nil {
		t.err = sys.EIO
		if t.failed != nil {
			t.failed(err)
		}
	}
	return t.fs, t.err
}

// made reports the host directory, "" while the guest has not used /tmp.
func (t *Tmp) made() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fs == nil {
		return ""
	}
	return t.fs.root.Name()
}

func (t *Tmp) cleanup() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	if t.fs != nil {
		_ = t.fs.Close()
		_ = removeTree(t.fs.root.Name())
	}
}

// Usage reports what the guest has spent of the budget so far.
func (t *Tmp) Usage() Usage {
	t.mu.Lock()
	f := t.fs
	t.mu.Unlock()
	if f == nil {
		return Usage{}
	}
	return f.Usage()
}

// empty reports whether /tmp is not made yet: it is then empty.
func (t *Tmp) empty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fs == nil && t.err == 0 && !t.closed
}

// isRoot reports whether a mount's path names its root.
func isRoot(path string) bool { return path == "." || path == "" || path == "/" }

// rootStat is the stat of the empty root.
func (t *Tmp) rootStat() wsys.Stat_t {
	return wsys.Stat_t{Mode: fs.ModeDir | 0o700, Nlink: 2, Atim: t.born, Mtim: t.born, Ctim: t.born}
}

func (t *Tmp) OpenFile(path string, flag sys.Oflag, perm fs.FileMode) (sys.File, sys.Errno) {
	if t.empty() && flag&(sys.O_CREAT|sys.O_TRUNC|sys.O_WRONLY|sys.O_RDWR|sys.O_APPEND) == 0 {
		if isRoot(path) {
			return &tmpRoot{t: t}, 0
		}
		return nil, sys.ENOENT
	}
	f, errno := t.mount()
	if errno != 0 {
		return nil, errno
	}
	return f.OpenFile(path, flag, perm)
}

func (t *Tmp) Lstat(path string) (wsys.Stat_t, sys.Errno) {
	if t.empty() {
		return t.emptyStat(path)
	}
	f, errno := t.mount()
	if errno != 0 {
		return wsys.Stat_t{}, errno
	}
	return f.Lstat(path)
}

func (t *Tmp) Stat(path string) (wsys.Stat_t, sys.Errno) {
	if t.empty() {
		return t.emptyStat(path)
	}
	f, errno := t.mount()
	if errno != 0 {
		return wsys.Stat_t{}, errno
	}
	return f.Stat(path)
}

// emptyStat is Stat of path in the empty /tmp.
func (t *Tmp) emptyStat(path string) (wsys.Stat_t, sys.Errno) {
	if isRoot(path) {
		return t.rootStat(), 0
	}
	return wsys.Stat_t{}, sys.ENOENT
}

func (t *Tmp) Mkdir(path string, perm fs.FileMode) sys.Errno {
	return t.with(func(f *FS) sys.Errno { return f.Mkdir(path, perm) })
}

func (t *Tmp) Chmod(path string, perm fs.FileMode) sys.Errno {
	return t.with(func(f *FS) sys.Errno { return f.Chmod(path, perm) })
}

func (t *Tmp) Rename(from, to string) sys.Errno {
	return t.with(func(f *FS) sys.Errno { return f.Rename(from, to) })
}

func (t *Tmp) Rmdir(path string) sys.Errno {
	if t.empty() && !isRoot(path) {
		return sys.ENOENT
	}
	return t.with(func(f *FS) sys.Errno { return f.Rmdir(path) })
}

func (t *Tmp) Unlink(path string) sys.Errno {
	if t.empty() && !isRoot(path) {
		return sys.ENOENT
	}
	return t.with(func(f *FS) sys.Errno { return f.Unlink(path) })
}

func (t *Tmp) Link(oldPath, newPath string) sys.Errno {
	return t.with(func(f *FS) sys.Errno { return f.Link(oldPath, newPath) })
}

func (t *Tmp) Symlink(oldPath, linkName string) sys.Errno {
	return t.with(func(f *FS) sys.Errno { return f.Symlink(oldPath, linkName) })
}

func (t *Tmp) Readlink(path string) (string, sys.Errno) {
	if t.empty() && !isRoot(path) {
		return "", sys.ENOENT
	}
	f, errno := t.mount()
	if errno != 0 {
		return "", errno
	}
	return f.Readlink(path)
}

func (t *Tmp) Utimens(path string, atim, mtim int64) sys.Errno {
	return t.with(func(f *FS) sys.Errno { return f.Utimens(path, atim, mtim) })
}

// with calls op on the mount, made if need be.
func (t *Tmp) with(op func(*FS) sys.Errno) sys.Errno {
	f, errno := t.mount()
	if errno != 0 {
		return errno
	}
	return op(f)
}

// removeTree removes dir and everything below it. When a plain RemoveAll fails (a directory
// without write or search permission), it gives the owner back every directory's permissions
// and tries again. The guest cannot make symlinks, and filepath.WalkDir does not follow them
// anyway, so the walk stays inside dir.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = os.Chmod(dir, 0o700)
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// tmpRoot is /tmp's root opened while /tmp is not made (every guest opens it at start): the
// empty directory, until /tmp is made; then the made one's root.
type tmpRoot struct {
	sys.DirFile
	t    *Tmp
	real sys.File // the made root, once opened
}

// made returns the made root, opened on the first call after /tmp is made; nil before.
func (r *tmpRoot) made() (sys.File, sys.Errno) {
	if r.real != nil {
		return r.real, 0
	}
	if r.t.empty() {
		return nil, 0
	}
	f, errno := r.t.mount()
	if errno != 0 {
		return nil, errno
	}
	if r.real, errno = f.OpenFile(".", sys.O_RDONLY|sys.O_DIRECTORY, 0); errno != 0 {
		r.real = nil
		return nil, errno
	}
	return r.real, 0
}

// Each method answers as the empty root until /tmp is made (f nil), then as the made one.

func (r *tmpRoot) Dev() (uint64, sys.Errno) {
	if f, errno := r.made(); f != nil {
		return f.Dev()
	} else {
		return 0, errno
	}
}

func (r *tmpRoot) Ino() (wsys.Inode, sys.Errno) {
	if f, errno := r.made(); f != nil {
		return f.Ino()
	} else {
		return 0, errno
	}
}

func (r *tmpRoot) Stat() (wsys.Stat_t, sys.Errno) {
	switch f, errno := r.made(); {
	case f != nil:
		return f.Stat()
	case errno != 0:
		return wsys.Stat_t{}, errno
	}
	return r.t.rootStat(), 0
}

func (r *tmpRoot) Seek(offset seekOffset, whence int) (int64, sys.Errno) {
	if f, errno := r.made(); f != nil {
		return f.Seek(offset, whence)
	} else {
		return 0, errno
	}
}

func (r *tmpRoot) Readdir(n int) ([]sys.Dirent, sys.Errno) {
	if f, errno := r.made(); f != nil {
		return f.Readdir(n)
	} else {
		return nil, errno
	}
}

func (r *tmpRoot) Utimens(atim, mtim int64) sys.Errno {
	return r.t.Utimens(".", atim, mtim)
}

func (r *tmpRoot) Sync() sys.Errno            { return 0 }
func (r *tmpRoot) Datasync() sys.Errno        { return 0 }
func (r *tmpRoot) IsNonblock() bool           { return false }
func (r *tmpRoot) SetNonblock(bool) sys.Errno { return sys.ENOSYS }

func (r *tmpRoot) Close() sys.Errno {
	if r.real != nil {
		return r.real.Close()
	}
	return 0
}
