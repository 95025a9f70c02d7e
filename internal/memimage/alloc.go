package memimage

import "github.com/tetratelabs/wazero/experimental"

// Allocator is a wazero memory allocator whose next memory can start from an image: a module
// split by Split must be instantiated with one, told the image first, or its memory starts zero.
type Allocator interface {
	experimental.MemoryAllocator
	// StartFrom makes the next memory Allocate makes start with img's bytes.
	StartFrom(img *Image)
}

// NewAllocator returns an Allocator whose memories are Go slices, the image copied in: for a
// caller with no allocator of its own (tests, tools). A run's allocator maps the image instead
// (MapOver).
func NewAllocator() Allocator { return &sliceAllocator{} }

type sliceAllocator struct{ next *Image }

func (a *sliceAllocator) StartFrom(img *Image) { a.next = img }

func (a *sliceAllocator) Allocate(capacity, max uint64) experimental.LinearMemory {
	m := &sliceMemory{buf: make([]byte, 0, capacity), max: max, img: a.next}
	a.next = nil
	return m
}

type sliceMemory struct {
	buf []byte
	max uint64
	img *Image // copied in by the first Reallocate (instantiation's), then nil
}

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if old := uint64(len(m.buf)); size > old {
		m.buf = append(m.buf, make([]byte, size-old)...)
	}
	if m.img != nil {
		m.img.CopyTo(m.buf)
		m.img = nil
	}
	return m.buf
}

func (m *sliceMemory) Free() {}
