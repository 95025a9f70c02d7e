package memimage

import (
	"fmt"
	"sync"
)

// Image is the initial bytes of a linear memory, a whole number of wasm pages. It is safe for
// concurrent use; Close it when no memory will start from it again (memories already made keep
// their bytes).
type Image struct {
	data []byte

	once    sync.Once
	mu      sync.Mutex
	backing *backing // the sealed file MapOver maps; nil until the first MapOver, or where none
	err     error    // why there is no backing

	regions regionPool // the regions runs gave back (region.go)
}

// Len is how many bytes the image holds: a memory that starts from it must be at least as long.
func (img *Image) Len() int { return len(img.data) }

// CopyTo copies the image into the start of mem, a memory at least Len bytes long whose bytes are
// all zero.
func (img *Image) CopyTo(mem []byte) { copy(mem, img.data) }

// MapOver maps the image, copy-on-write, over the first Len bytes of region: the start of a
// private, writable mapping of the caller's at least Len bytes long, page aligned. What the
// region held there is replaced. It fails where the system has no sealed memory file; the caller
// then copies (CopyTo).
func (img *Image) MapOver(region []byte) error {
	img.once.Do(func() {
		b, err := newBacking(img.data)
		img.mu.Lock()
		img.backing, img.err = b, err
		img.mu.Unlock()
	})
	img.mu.Lock()
	defer img.mu.Unlock()
	if img.backing == nil {
		if img.err == nil {
			img.err = errClosed
		}
		return img.err
	}
	return img.backing.mapOver(region, len(img.data))
}

// Close releases the image's file and the regions kept for runs; memories mapped from it keep
// their pages, and regions in use are unmapped when they are recycled.
func (img *Image) Close() error {
	img.closeRegions()
	img.once.Do(func() {}) // no backing is made after Close
	img.mu.Lock()
	defer img.mu.Unlock()
	b := img.backing
	img.backing, img.err = nil, errClosed
	if b == nil {
		return nil
	}
	return b.close()
}

// FromBytes is an image of data, the initial bytes of a memory (a whole number of wasm pages),
// as Split made it and a caller kept it. The image holds data: the caller must not change it.
func FromBytes(data []byte) (*Image, error) {
	if len(data)%pageSize != 0 {
		return nil, fmt.Errorf("memimage: an image of %d bytes is not a whole number of %d-byte pages", len(data), pageSize)
	}
	return &Image{data: data}, nil
}

// Bytes is the image's bytes, for a caller to keep (FromBytes). They must not be changed.
func (img *Image) Bytes() []byte { return img.data }
