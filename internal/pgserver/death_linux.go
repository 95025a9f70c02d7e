package pgserver

import "syscall"

// setDeathSignal has the kernel kill the server when the test binary dies, so a crashed test
// leaves no server behind.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
