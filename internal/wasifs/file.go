package wasifs

import (
	"errors"
	"io"

	"os"

	"github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// readdirChunk is how many entries one host call reads from a directory. wazero asks for as
// many entries as the guest's buffer could hold (up to its whole memory); the host reads them
// in chunks so that what it allocates follows the directory, not the guest's request.
const readdirChunk = 128

// file is a regular file or a directory the guest opened in an FS. Reads and writes go straight
// between the guest's memory and the kernel: the host allocates no buffer of its own.
type file struct {
	sys.UnimplementedFile

	fs       *FS
	f        *os.File
	path     string // cleaned, relative to the mount: for budget errors
	dev      uint64
	ino      wsys.Inode
	dir      bool
	writable bool // opened for writing in a writable mount
	append   bool
	closed   bool
}

var _ sys.File = (*file)(nil)

// Dev implements sys.File from the status taken at open.
func (f *file) Dev() (uint64, sys.Errno) { return f.dev, 0 }

// Ino implements sys.File from the status taken at open.
func (f *file) Ino() (wsys.Inode, sys.Errno) { return f.ino, 0 }

// IsDir implements sys.File from the status taken at open.
func (f *file) IsDir() (bool, sys.Errno) { return f.dir, 0 }

// IsAppend implements sys.File.
func (f *file) IsAppend() bool { return f.append }

// SetAppend implements sys.File. Changing the mode of an open file is not supported (ENOSYS);
// asking for the mode it has succeeds, which is what fcntl(F_SETFL) with unchanged flags does.
func (f *file) SetAppend(enable bool) sys.Errno {
	if enable == f.append {
		return 0
	}
	return sys.ENOSYS
}

// Stat implements sys.File.
func (f *file) Stat() (wsys.Stat_t, sys.Errno) {
	fi, err := f.f.Stat()
	if err != nil {
		return wsys.Stat_t{}, errnoOf(err)
	}
	return wsys.NewStat_t(fi), 0
}

// Read implements sys.File into the guest's buffer.
func (f *file) Read(buf []byte) (int, sys.Errno) {
	if f.dir {
		return 0, sys.EISDIR
	}
	n, err := f.f.Read(buf)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, errnoOf(err)
}

// Pread implements sys.File into the guest's buffer.
func (f *file) Pread(buf []byte, off int64) (int, sys.Errno) {
	if f.dir {
		return 0, sys.EISDIR
	}
	if off < 0 {
		return 0, sys.EINVAL
	}
	n, err := f.f.ReadAt(buf, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, errnoOf(err)
}

// seekOffset is int64. Seek spells its parameter with this alias because go vet's stdmethods
// check expects every method named Seek to be io.Seeker's, and sys.File's Seek returns an Errno.
type seekOffset = int64

// Seek implements sys.File. On a file open for writing, a seek past Options.MaxBytes is
// refused as a crossed budget: a write there would make a file (of holes) longer than all the
// run may write.
func (f *file) Seek(offset seekOffset, whence int) (int64, sys.Errno) {
	if whence < io.SeekStart || whence > io.SeekEnd {
		return 0, sys.EINVAL
	}
	if !f.writable {
		n, err := f.f.Seek(offset, whence)
		return n, errnoOf(err)
	}
	prev, err := f.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, errnoOf(err)
	}
	n, err := f.f.Seek(offset, whence)
	if err != nil {
		return 0, errnoOf(err)
	}
	if limit, _ := f.fs.opts.fileMax(); n > limit {
		_, _ = f.f.Seek(prev, io.SeekStart)
		return 0, f.fs.refuseSize(f.path)
	}
	return n, 0
}

// Readdir implements sys.File, n entries at most (all when n <= 0), "." and ".." excluded.
// Each entry is read with its status (an lstat relative to the open directory) for the inode
// number wasi-libc's readdir wants; without it, the guest would stat every entry itself.
func (f *file) Readdir(n int) ([]sys.Dirent, sys.Errno) {
	if !f.dir {
		return nil, sys.EBADF
	}
	var out []sys.Dirent
	for n <= 0 || len(out) < n {
		want := readdirChunk
		if n > 0 && n-len(out) < want {
			want = n - len(out)
		}
		fis, err := f.f.Readdir(want)
		for _, fi := range fis {
			out = append(out, sys.Dirent{Name: fi.Name(), Ino: wsys.NewStat_t(fi).Ino, Type: fi.Mode().Type()})
		}
		if errors.Is(err, io.EOF) || (err == nil && len(fis) < want) {
			break
		}
		if err != nil {
			return nil, errnoOf(err)
		}
	}
	return out, 0
}

// Write implements sys.File from the guest's buffer, within Options.MaxBytes: a write that
// does not fit is cut short to what is left, and one with nothing left fails (see errBudget).
func (f *file) Write(buf []byte) (int, sys.Errno) {
	if !f.writable {
		return 0, f.writeErr()
	}
	if len(buf) == 0 {
		return 0, 0
	}
	want := int64(len(buf))
	if limit, _ := f.fs.opts.fileMax(); limit < f.fs.opts.MaxBytes {
		// A per-file bound: the write ends where the file's own room does. (Without one, MaxBytes
		// bounds the file already: no file holds more than all the run may write.)
		pos, errno := f.writePos()
		if errno != 0 {
			return 0, errno
		}
		if want = min(want, limit-pos); want <= 0 {
			return 0, f.fs.refuseSize(f.path)
		}
	}
	granted := f.fs.takeBytes(f.path, want, false)
	if granted == 0 {
		return 0, errBudget
	}
	n, err := f.f.Write(buf[:granted])
	f.fs.giveBytes(granted - int64(n))
	return n, errnoOf(err)
}

// Pwrite implements sys.File like Write, and refuses to write past Options.MaxBytes.
func (f *file) Pwrite(buf []byte, off int64) (int, sys.Errno) {
	if !f.writable {
		return 0, f.writeErr()
	}
	if off < 0 || f.append {
		return 0, sys.EINVAL // os.File refuses WriteAt on a file opened to append
	}
	if len(buf) == 0 {
		return 0, 0
	}
	want := int64(len(buf))
	limit, _ := f.fs.opts.fileMax()
	if room := limit - off; want > room {
		want = room
	}
	if want <= 0 {
		return 0, f.fs.refuseSize(f.path)
	}
	granted := f.fs.takeBytes(f.path, want, false)
	if granted == 0 {
		return 0, errBudget
	}
	n, err := f.f.WriteAt(buf[:granted], off)
	f.fs.giveBytes(granted - int64(n))
	return n, errnoOf(err)
}

// Truncate implements sys.File. Growth counts against Options.MaxBytes (fd_allocate lands here
// too), and no file grows past it.
func (f *file) Truncate(size int64) sys.Errno {
	if !f.writable {
		return f.writeErr()
	}
	if size < 0 {
		return sys.EINVAL
	}
	fi, err := f.f.Stat()
	if err != nil {
		return errnoOf(err)
	}
	var granted int64
	if grow := size - fi.Size(); grow > 0 {
		if limit, _ := f.fs.opts.fileMax(); size > limit {
			return f.fs.refuseSize(f.path)
		}
		if granted = f.fs.takeBytes(f.path, grow, true); granted == 0 {
			return errBudget
		}
	}
	if err := f.f.Truncate(size); err != nil {
		f.fs.giveBytes(granted)
		return errnoOf(err)
	}
	return 0
}

// writePos is where the next Write lands: the end of a file open to append, else its offset.
func (f *file) writePos() (int64, sys.Errno) {
	if f.append {
		fi, err := f.f.Stat()
		if err != nil {
			return 0, errnoOf(err)
		}
		return fi.Size(), 0
	}
	pos, err := f.f.Seek(0, io.SeekCurrent)
	return pos, errnoOf(err)
}

// writeErr is the errno of a write to a file not open for writing.
func (f *file) writeErr() sys.Errno {
	if f.dir {
		return sys.EISDIR
	}
	if !f.fs.opts.Writable {
		return sys.EROFS
	}
	return sys.EBADF
}

// Sync implements sys.File as a no-op: a run's files are not promised to outlive a host
// crash, and a guest must not be able to make the host flush its disks in a loop.
func (f *file) Sync() sys.Errno { return f.closedErr() }

// Datasync implements sys.File as Sync does.
func (f *file) Datasync() sys.Errno { return f.closedErr() }

func (f *file) closedErr() sys.Errno {
	if f.closed {
		return sys.EBADF
	}
	return 0
}

// Utimens implements sys.File on a file open for writing.
func (f *file) Utimens(atim, mtim int64) sys.Errno {
	if !f.fs.opts.Writable {
		return sys.EROFS
	}
	if f.closed {
		return sys.EBADF
	}
	if atim == sys.UTIME_OMIT && mtim == sys.UTIME_OMIT {
		return 0
	}
	var st wsys.Stat_t
	if atim == sys.UTIME_OMIT || mtim == sys.UTIME_OMIT {
		var errno sys.Errno
		if st, errno = f.Stat(); errno != 0 {
			return errno
		}
	}
	return futimes(f.f, timeOr(atim, st.Atim), timeOr(mtim, st.Mtim))
}

// Close implements sys.File; closing twice is not an error.
func (f *file) Close() sys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return errnoOf(f.f.Close())
}
