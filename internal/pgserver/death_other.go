//go:build unix && !linux

package pgserver

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
