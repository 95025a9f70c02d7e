//go:build !unix

package pgserver

import "syscall"

func own(string) error                   { return nil }
func asServerUser() *syscall.SysProcAttr { return nil }
