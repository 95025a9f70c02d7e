//go:build !unix

package pgserver

import (
	"os"
	"syscall"
)

func own(string) error                   { return nil }
func tempBase() string                   { return "" }
func asServerUser() *syscall.SysProcAttr { return nil }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func groupAlive(int) bool { return false }
