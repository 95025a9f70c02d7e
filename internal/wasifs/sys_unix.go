//go:build unix && !linux

package wasifs

import (
	"os"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// setBlocking clears the O_NONBLOCK the open was made with (see sys_linux.go).
func setBlocking(f *os.File, _ int) sys.Errno {
	rc, err := f.SyscallConn()
	if err != nil {
		return errnoOf(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return errnoOf(err)
	}
	return errnoOf(serr)
}

// futimes sets the times of an open file (microseconds: what the portable call offers).
func futimes(f *os.File, atime, mtime time.Time) sys.Errno {
	rc, err := f.SyscallConn()
	if err != nil {
		return errnoOf(err)
	}
	tv := []syscall.Timeval{syscall.NsecToTimeval(atime.UnixNano()), syscall.NsecToTimeval(mtime.UnixNano())}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Futimes(int(fd), tv) }); err != nil {
		return errnoOf(err)
	}
	return errnoOf(serr)
}
