package engine

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/internal/memimage"
)

// MemoryMeter is a run's wazero memory allocator. It holds every linear memory of the instance
// (the module's and the Extism kernel's) to one limit together — the run's memory limit less
// what its tables may take — which wazero's per-memory page limit cannot do, and measures their
// peak for the run's usage.
//
// Each memory is reserved at its maximum as one anonymous mapping, committed page by page as the
// guest touches it, so growing never copies and a run holds what it touched, not twice that as a
// doubling Go slice would; the mappings are released when the run is over (release), never while
// wazero may still use them. Where mappings are not available, memories are Go slices.
type MemoryMeter struct {
	limit uint64 // bytes all the run's linear memories may hold together

	mu      sync.Mutex
	current uint64
	peak    uint64
	// refused is set when a grow was refused for the limit; overAtStart when instantiation
	// needed more than the limit (wazero cannot be refused then: the run is failed after).
	refused, overAtStart bool
	// nearFull is set when a memory grew (after instantiation) to within 1/8 of its own maximum:
	// wazero refuses a grow past that maximum before the allocator sees it, so "the last grow
	// that succeeded left little room" is the best view of running out of it.
	nearFull bool
	mapped   []*meteredMemory // the memories backed by a mapping, given back by release
	released bool
	// first holds the first memories a run makes (its module's and the kernel's arena), and
	// firstMapped backs mapped, so that a run allocates none of them.
	first       [2]meteredMemory
	made        int
	firstMapped [2]*meteredMemory
	// image, when set, is what the next memory starts with (StartFrom).
	image *memimage.Image
}

var _ memimage.Allocator = (*MemoryMeter)(nil)

// StartFrom makes the next memory start with img: a region of img's, already holding its bytes
// (memimage.Image.Region), or copied in where there is none.
func (m *MemoryMeter) StartFrom(img *memimage.Image) {
	m.mu.Lock()
	m.image = img
	m.mu.Unlock()
}

func NewMemoryMeter(limit uint64) *MemoryMeter {
	m := new(MemoryMeter)
	m.Init(limit)
	return m
}

// Init readies a zero meter (one inside a larger allocation) for a run with limit.
func (m *MemoryMeter) Init(limit uint64) {
	m.limit = limit
	m.mapped = m.firstMapped[:0]
}

func (m *MemoryMeter) Allocate(capacity, max uint64) experimental.LinearMemory {
	var l *meteredMemory
	m.mu.Lock()
	if m.made < len(m.first) {
		l = &m.first[m.made]
	} else {
		l = new(meteredMemory)
	}
	m.made++
	img := m.image
	m.image = nil
	m.mu.Unlock()
	*l = meteredMemory{meter: m, max: max}
	var buf []byte
	var err error
	if img != nil {
		// A region that starts with the image, most often one a run gave back (memimage).
		if buf, err = img.Region(max); err == nil {
			l.region, img = img, nil
		}
	}
	if buf == nil {
		buf, err = mappings.get(max)
	}
	if err == nil {
		l.buf, l.mapping = buf[:0], buf
		m.mu.Lock()
		m.mapped = append(m.mapped, l)
		m.mu.Unlock()
	} else {
		l.buf = make([]byte, 0, capacity)
	}
	l.image = img
	return l
}

// grow accounts for delta more bytes; it refuses (false) a grow past the limit after
// instantiation.
func (m *MemoryMeter) grow(delta uint64, instantiating, nearFull bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current+delta > m.limit {
		if !instantiating {
			m.refused = true
			return false
		}
		m.overAtStart = true
	}
	m.current += delta
	m.peak = max(m.peak, m.current)
	m.nearFull = m.nearFull || nearFull
	return true
}

// Stats reports the peak, and whether the run most likely ran out of memory.
func (m *MemoryMeter) Stats() (peak uint64, outOfMemory bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak, m.refused || m.nearFull
}

func (m *MemoryMeter) StartedOver() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.overAtStart
}

// Release gives back every mapped memory of the run (see mappings.go). Call it only once the
// instance is closed and no call into it can still run: nothing may touch the memories after.
func (m *MemoryMeter) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return
	}
	m.released = true
	for _, l := range m.mapped {
		if l.region != nil {
			// Put back to the image off the run's path: it copies the image's megabytes.
			go l.region.Recycle(l.mapping, uint64(len(l.buf)))
		} else {
			mappings.put(l.mapping, uint64(len(l.buf)))
		}
		l.buf, l.mapping, l.region = nil, nil, nil
	}
	m.mapped = nil
}

type meteredMemory struct {
	meter *MemoryMeter
	buf   []byte
	// mapping is the whole mapping buf lives in (nil for a Go slice).
	mapping []byte
	max     uint64
	grown   bool // false until the first Reallocate, which sizes the memory at instantiation
	// image is copied in by the first Reallocate: an image StartFrom named whose region could
	// not be had. region is the image whose region mapping is (memimage.Image.Region), which
	// Release gives it back to.
	image, region *memimage.Image
}

// Reallocate grows the memory to size bytes (never past its maximum, nor the run's limit); the
// new bytes are zero. nil refuses the grow: the guest's memory.grow returns -1.
func (l *meteredMemory) Reallocate(size uint64) []byte {
	if size > l.max {
		return nil
	}
	old := uint64(len(l.buf))
	if size > old && !l.meter.grow(size-old, !l.grown, l.grown && size >= l.max-l.max/8) {
		return nil
	}
	l.grown = true
	switch {
	case size <= uint64(cap(l.buf)):
		// A mapping, or a slice within capacity: zero already (fresh pages are zero, and a wasm
		// memory never shrinks, so nothing past len was ever written), or the image's.
		l.buf = l.buf[:size]
	default:
		l.buf = append(l.buf, make([]byte, size-old)...)
	}
	if l.image != nil {
		l.image.CopyTo(l.buf)
		l.image = nil
	}
	return l.buf
}

// Free is a no-op: wazero calls it when it closes the instance, possibly while the guest's call
// is still unwinding; the meter releases the memory once the run is over.
func (l *meteredMemory) Free() {}

// Arena returns a metered buffer for the native kernel's blocks, within the run's limit together
// with its linear memories. Unlike a memory, it exists only after instantiation, so every grow is
// refused past the limit.
func (m *MemoryMeter) Arena() *meteredMemory {
	l := m.Allocate(0, m.limit).(*meteredMemory)
	l.grown = true
	return l
}

// Child makes the meter of a run nested in m's (a program's subprocess): its limit is what m
// has left, so that the two together stay within m's. Call Adopt with it once it is over.
func (m *MemoryMeter) Child() *MemoryMeter {
	m.mu.Lock()
	defer m.mu.Unlock()
	return NewMemoryMeter(m.limit - min(m.current, m.limit))
}

// Adopt counts a finished child's peak (see Child) in m's: the most the two held together.
func (m *MemoryMeter) Adopt(child *MemoryMeter) {
	peak, _ := child.Stats()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peak = max(m.peak, m.current+peak)
}
