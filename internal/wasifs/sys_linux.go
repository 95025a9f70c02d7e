package wasifs

import (
	"os"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// setBlocking clears the O_NONBLOCK the open was made with, once the file is known to be a
// regular file, so that reads and writes behave as the guest expects (on a local file system
// the flag changes nothing, but a FUSE or network one may honour it). One F_SETFL with the
// open's own status flags does it: syscall.SetNonblock would first read them (two calls, a
// quarter of an open's cost). Of osflag, F_SETFL looks only at O_APPEND (and O_NONBLOCK, which
// is cleared); the access mode and the creation flags are ignored.
func setBlocking(f *os.File, osflag int) sys.Errno {
	_, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETFL, uintptr(osflag&^syscall.O_NONBLOCK))
	if e != 0 {
		return errnoOf(e)
	}
	return 0
}

// futimes sets the times of an open file (microseconds: what the syscall package offers).
func futimes(f *os.File, atime, mtime time.Time) sys.Errno {
	tv := []syscall.Timeval{syscall.NsecToTimeval(atime.UnixNano()), syscall.NsecToTimeval(mtime.UnixNano())}
	return errnoOf(syscall.Futimes(int(f.Fd()), tv))
}
