//go:build unix

package engine

import (
	"errors"
	"os"
	"syscall"
)

// mapMemory reserves n bytes of zeroed, private memory that the kernel commits page by page as
// it is touched (MAP_NORESERVE: reserving a run's whole maximum costs no swap or commit charge).
func mapMemory(n uint64) ([]byte, error) {
	if n == 0 || n > 1<<32 {
		return nil, errors.New("no mapping for this size")
	}
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
}

func unmapMemory(b []byte) { _ = syscall.Munmap(b) }

// peakRSS is a finished child's peak resident memory, in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return int64(ru.Maxrss) << 10 // kilobytes on Linux
	}
	return 0
}
