// Package memimagetest helps tests see the memories an allocator made.
package memimagetest

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/internal/memimage"
)

// Recorder is an allocator that keeps the buffers another makes, as instantiation left them (its
// first Reallocate): a test compares what a module started with after its instance is closed,
// while the allocator's memories are still held (a run's are released after it).
type Recorder struct {
	memimage.Allocator
	mu      sync.Mutex
	started [][]byte
}

func (r *Recorder) Allocate(capacity, max uint64) experimental.LinearMemory {
	return &recorded{LinearMemory: r.Allocator.Allocate(capacity, max), r: r}
}

// Started returns the memories made so far, in order, each as instantiation left it.
func (r *Recorder) Started() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

type recorded struct {
	experimental.LinearMemory
	r    *Recorder
	seen bool
}

func (m *recorded) Reallocate(size uint64) []byte {
	b := m.LinearMemory.Reallocate(size)
	if !m.seen {
		m.seen = true
		m.r.mu.Lock()
		m.r.started = append(m.r.started, b)
		m.r.mu.Unlock()
	}
	return b
}
