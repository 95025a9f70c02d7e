//go:build unix

package pgserver

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// serverUser is who runs the server when this process is root: PostgreSQL refuses root.
func serverUser() (uid, gid uint32, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return uint32(uid), uint32(gid), true
		}
	}
	return 0, 0, false
}

// tempBase is where the server's directory is made ("" for the temporary directory): /tmp
// instead when this process is root and the temporary directory is closed to the server's user
// (a private TMPDIR of mode 0700), which initdb could not then reach.
func tempBase() string {
	if _, _, ok := serverUser(); !ok {
		return ""
	}
	if st, err := os.Stat(os.TempDir()); err == nil && st.Mode().Perm()&0o001 != 0 {
		return ""
	}
	return "/tmp"
}

// own gives dir to the server's user.
func own(dir string) error {
	if uid, gid, ok := serverUser(); ok {
		return os.Chown(dir, int(uid), int(gid))
	}
	return nil
}

// asServerUser runs a command as the server's user, and kills it if this process dies.
func asServerUser() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(a)
	if uid, gid, ok := serverUser(); ok {
		a.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	}
	return a
}

// killGroup sends SIGKILL to the process group of the server pid leads.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// groupAlive says whether a process of pid's group is left.
func groupAlive(pid int) bool { return syscall.Kill(-pid, 0) == nil }
