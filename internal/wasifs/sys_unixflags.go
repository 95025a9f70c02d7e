//go:build unix

package wasifs

import "syscall"

const (
	oDirectory = syscall.O_DIRECTORY
	oNoctty    = syscall.O_NOCTTY
)
