//go:build !unix

package engine

import (
	"errors"
	"os"
)

// Without mmap, linear memories are Go slices (see MemoryMeter).
func mapMemory(uint64) ([]byte, error) { return nil, errors.New("no mappings on this platform") }

func unmapMemory([]byte) {}

func peakRSS(*os.ProcessState) int64 { return 0 }
