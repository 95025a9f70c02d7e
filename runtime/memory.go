package runtime

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryMeter is a wazero memory allocator that measures a run's linear memory: the sum of the
// current sizes of every memory the instance has (the module's and the Extism kernel's), and the
// peak of that sum. wazero enforces the limit; this only counts, to report usage and to tell a
// module that ran out of memory from one that trapped for another reason.
type memoryMeter struct {
	mu      sync.Mutex
	current uint64
	peak    uint64
	// nearFull is set when a memory grew (after instantiation) to within 1/8 of its maximum.
	// wazero refuses a grow past the maximum before the allocator sees it, so "the last grow
	// that succeeded left little room" is the allocator's best view of "ran out of memory".
	nearFull bool
}

var _ experimental.MemoryAllocator = (*memoryMeter)(nil)

func (m *memoryMeter) Allocate(capacity, max uint64) experimental.LinearMemory {
	return &meteredMemory{meter: m, buf: make([]byte, 0, capacity), max: max}
}

func (m *memoryMeter) grew(delta uint64, nearFull bool) {
	m.mu.Lock()
	m.current += delta
	m.peak = max(m.peak, m.current)
	m.nearFull = m.nearFull || nearFull
	m.mu.Unlock()
}

func (m *memoryMeter) stats() (peak uint64, nearFull bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak, m.nearFull
}

type meteredMemory struct {
	meter *memoryMeter
	buf   []byte
	max   uint64
	grown bool // false until the first Reallocate, which sizes the memory at instantiation
}

// Reallocate grows the memory to size bytes (never past its maximum); the new bytes are zero.
func (l *meteredMemory) Reallocate(size uint64) []byte {
	if size > l.max {
		return nil
	}
	old := uint64(len(l.buf))
	switch {
	case size <= uint64(cap(l.buf)):
		// Within capacity: zero already (a fresh slice is zeroed, and a wasm memory never
		// shrinks, so nothing past len was ever written).
		l.buf = l.buf[:size]
	default:
		// Grow as wazero's own allocator does (append), so metering costs no extra zeroing.
		l.buf = append(l.buf, make([]byte, size-old)...)
	}
	if size > old {
		l.meter.grew(size-old, l.grown && size >= l.max-l.max/8)
	}
	l.grown = true
	return l.buf
}

func (l *meteredMemory) Free() { l.buf = nil }
