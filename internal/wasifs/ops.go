package wasifs

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// Lstat implements sys.FS: the status of path itself, a symlink included.
func (f *FS) Lstat(path string) (wsys.Stat_t, sys.Errno) {
	p, errno := cleanPath(path)
	if errno != 0 {
		return wsys.Stat_t{}, errno
	}
	fi, err := f.root.Lstat(p)
	if err != nil {
		return wsys.Stat_t{}, errnoOf(err)
	}
	return wsys.NewStat_t(fi), 0
}

// Stat implements sys.FS: the status of what path names, following symlinks inside the root.
func (f *FS) Stat(path string) (wsys.Stat_t, sys.Errno) {
	p, errno := cleanPath(path)
	if errno != 0 {
		return wsys.Stat_t{}, errno
	}
	fi, err := f.root.Stat(p)
	if err != nil {
		return wsys.Stat_t{}, errnoOf(err)
	}
	return wsys.NewStat_t(fi), 0
}

// mutable cleans path for a call that changes the mount: EROFS on a read-only one.
func (f *FS) mutable(path string) (string, sys.Errno) {
	if !f.opts.Writable {
		return "", sys.EROFS
	}
	return cleanPath(path)
}

// Mkdir implements sys.FS; a new directory counts against Options.MaxFiles.
func (f *FS) Mkdir(path string, perm fs.FileMode) sys.Errno {
	p, errno := f.mutable(path)
	if errno != 0 {
		return errno
	}
	if _, err := f.root.Lstat(p); err == nil {
		return sys.EEXIST // an existing name costs no budget
	}
	if !f.takeFile(p) {
		return errBudget
	}
	if err := f.root.Mkdir(p, perm&fs.ModePerm); err != nil {
		f.giveFile()
		return errnoOf(err)
	}
	return 0
}

// Chmod implements sys.FS; only the permission bits are kept (no setuid, setgid or sticky).
func (f *FS) Chmod(path string, perm fs.FileMode) sys.Errno {
	p, errno := f.mutable(path)
	if errno != 0 {
		return errno
	}
	return errnoOf(f.root.Chmod(p, perm&fs.ModePerm))
}

// Rename implements sys.FS. Both names are in this mount: wazero refuses a rename between
// mounts before it gets here, and a name that leaves the root is refused like any other.
func (f *FS) Rename(from, to string) sys.Errno {
	src, errno := f.mutable(from)
	if errno != 0 {
		return errno
	}
	dst, errno := cleanPath(to)
	if errno != 0 {
		return errno
	}
	return errnoOf(f.root.Rename(src, dst))
}

// Rmdir implements sys.FS.
func (f *FS) Rmdir(path string) sys.Errno {
	p, errno := f.mutable(path)
	if errno != 0 {
		return errno
	}
	fi, err := f.root.Lstat(p)
	if err != nil {
		return errnoOf(err)
	}
	if !fi.IsDir() {
		return sys.ENOTDIR
	}
	return errnoOf(f.root.Remove(p))
}

// Unlink implements sys.FS: it removes a file or a symlink, never what a symlink names.
func (f *FS) Unlink(path string) sys.Errno {
	p, errno := f.mutable(path)
	if errno != 0 {
		return errno
	}
	fi, err := f.root.Lstat(p)
	if err != nil {
		return errnoOf(err)
	}
	if fi.IsDir() {
		return sys.EISDIR
	}
	return errnoOf(f.root.Remove(p))
}

// Link implements sys.FS and refuses: a hard link made by the guest would outlive the rules
// that apply to its name (and a link to a file another mount exposes would cross mounts).
func (f *FS) Link(_, _ string) sys.Errno {
	if !f.opts.Writable {
		return sys.EROFS
	}
	return sys.EPERM
}

// Symlink implements sys.FS and refuses: the guest cannot plant a symlink for the host or for
// a later run to follow.
func (f *FS) Symlink(_, _ string) sys.Errno {
	if !f.opts.Writable {
		return sys.EROFS
	}
	return sys.EPERM
}

// Readlink implements sys.FS. The text of a symlink that points out of the root is not given:
// it would tell the guest the host's paths; EACCES, as for following it.
func (f *FS) Readlink(path string) (string, sys.Errno) {
	p, errno := cleanPath(path)
	if errno != 0 {
		return "", errno
	}
	target, err := f.root.Readlink(p)
	if err != nil {
		return "", errnoOf(err)
	}
	if !inside(p, target) {
		return "", sys.EACCES
	}
	return target, 0
}

// Utimens implements sys.FS, following symlinks inside the root.
func (f *FS) Utimens(path string, atim, mtim int64) sys.Errno {
	p, errno := f.mutable(path)
	if errno != 0 {
		return errno
	}
	if atim == sys.UTIME_OMIT && mtim == sys.UTIME_OMIT {
		return 0
	}
	var st wsys.Stat_t
	if atim == sys.UTIME_OMIT || mtim == sys.UTIME_OMIT {
		if st, errno = f.Stat(p); errno != 0 {
			return errno
		}
	}
	return errnoOf(f.root.Chtimes(p, timeOr(atim, st.Atim), timeOr(mtim, st.Mtim)))
}

// timeOr is the time of nanos, or of old when nanos is UTIME_OMIT.
func timeOr(nanos, old int64) time.Time {
	if nanos == sys.UTIME_OMIT {
		nanos = old
	}
	return time.Unix(0, nanos)
}

// OpenFile implements sys.FS.
//
// The open itself is non-blocking and the opened file's own status is checked, so neither a
// FIFO (which would block the open until a writer came) nor a file swapped in between a check
// and the open gets through: anything but a regular file or a directory is closed and refused
// with EACCES. A create counts against Options.MaxFiles only when it makes a new file.
func (f *FS) OpenFile(path string, flag sys.Oflag, perm fs.FileMode) (sys.File, sys.Errno) {
	p, errno := cleanPath(path)
	if errno != 0 {
		return nil, errno
	}
	writes := flag&(sys.O_WRONLY|sys.O_RDWR) != 0
	if (writes || flag&(sys.O_CREAT|sys.O_TRUNC|sys.O_APPEND) != 0) && !f.opts.Writable {
		if flag&sys.O_DIRECTORY != 0 {
			return nil, sys.EISDIR
		}
		return nil, sys.EROFS
	}
	if flag&sys.O_NOFOLLOW != 0 {
		// os.Root follows a symlink in the last component even with O_NOFOLLOW; the guest
		// asked not to, so say ELOOP as open(2) does.
		if fi, err := f.root.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, sys.ELOOP
		}
	}
	osf, errno := f.open(p, flag, perm&fs.ModePerm)
	if errno != 0 {
		return nil, errno
	}
	fi, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, errnoOf(err)
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		osf.Close()
		return nil, sys.EACCES
	}
	if !fi.IsDir() { // O_NONBLOCK does not touch reading a directory
		if errno := setBlocking(osf, osFlag(flag)); errno != 0 {
			osf.Close()
			return nil, errno
		}
	}
	st := wsys.NewStat_t(fi)
	return &file{
		fs: f, f: osf, path: p, dev: st.Dev, ino: st.Ino, dir: fi.IsDir(),
		writable: writes && f.opts.Writable, append: flag&sys.O_APPEND != 0,
	}, 0
}

// open opens p with os.Root, charging a file that the open creates to the budget.
func (f *FS) open(p string, flag sys.Oflag, perm fs.FileMode) (*os.File, sys.Errno) {
	osflag := osFlag(flag)
	if flag&sys.O_CREAT == 0 {
		return f.openRoot(p, osflag, perm)
	}
	if flag&sys.O_EXCL == 0 {
		// Open what exists, free; create only what does not.
		osf, errno := f.openRoot(p, osflag&^os.O_CREATE, perm)
		if errno != sys.ENOENT {
			return osf, errno
		}
	}
	if !f.takeFile(p) {
		return nil, errBudget
	}
	osf, errno := f.openRoot(p, osflag|os.O_EXCL, perm)
	if errno != 0 {
		f.giveFile()
		if errno == sys.EEXIST && flag&sys.O_EXCL == 0 {
			// Created by someone else between the two opens: open it as it is.
			return f.openRoot(p, osflag&^os.O_CREATE, perm)
		}
	}
	return osf, errno
}

func (f *FS) openRoot(p string, osflag int, perm fs.FileMode) (*os.File, sys.Errno) {
	osf, err := f.root.OpenFile(p, osflag, perm)
	if err != nil {
		return nil, errnoOf(err)
	}
	return osf, 0
}

// osFlag translates the guest's open flags. O_NONBLOCK and O_NOCTTY are always set (an open
// must neither wait on a FIFO nor give a terminal to the host); the sync flags are dropped so
// that a guest cannot make every write a disk flush on the host.
func osFlag(flag sys.Oflag) int {
	var o int
	switch {
	case flag&sys.O_RDWR != 0:
		o = os.O_RDWR
	case flag&sys.O_WRONLY != 0:
		o = os.O_WRONLY
	default:
		o = os.O_RDONLY
	}
	if flag&sys.O_APPEND != 0 {
		o |= os.O_APPEND
	}
	if flag&sys.O_CREAT != 0 {
		o |= os.O_CREATE
	}
	if flag&sys.O_EXCL != 0 {
		o |= os.O_EXCL
	}
	if flag&sys.O_TRUNC != 0 {
		o |= os.O_TRUNC
	}
	if flag&sys.O_DIRECTORY != 0 {
		o |= oDirectory
	}
	return o | syscall.O_NONBLOCK | oNoctty
}
