package memimage

import "sync"

// Regions: a run's memory, reserved at its maximum, that starts with the image. Measured on a
// 2-core VM, a page fault costs about 10 µs: a run whose memory was a fresh mapping spent more
// time faulting the snapshot's pages in than running. So a region a run is done with is put
// back to the image's bytes (copied over what the run may have written; past the image, what it
// touched is cleared) and kept for the next run, whose pages are then all resident: it starts
// with no faults at all. A region made afresh maps the image copy-on-write (MapOver), so even a
// cold run faults in only what it touches.
const (
	// regionsPerSize bounds the idle regions of one size: an idle interpreter holds at most this
	// many, each the image and what its last run touched.
	regionsPerSize = 4
	// maxRecycled is the most a run may have touched for its region to be kept: clearing more
	// costs more than mapping afresh, and holds that much while idle.
	maxRecycled = 64 << 20
)

type regionPool struct {
	mu     sync.Mutex
	idle   map[int][][]byte // by size
	closed bool
}

// Region returns n bytes of private, writable memory, reserved (committed as it is touched),
// that start with the image and are zero after it: a recycled region, or a new one. Give it
// back with Recycle. n must be at least Len.
func (img *Image) Region(n uint64) ([]byte, error) {
	img.regions.mu.Lock()
	if l := img.regions.idle[int(n)]; len(l) > 0 {
		r := l[len(l)-1]
		img.regions.idle[int(n)] = l[:len(l)-1]
		img.regions.mu.Unlock()
		return r, nil
	}
	img.regions.mu.Unlock()
	r, err := reserve(n)
	if err != nil {
		return nil, err
	}
	if err := img.MapOver(r); err != nil {
		img.CopyTo(r)
	}
	return r, nil
}

// Recycle takes back a region from Region whose first touched bytes a run may have written, once
// nothing can use it any more: it is put back to the image and kept, or unmapped. It copies up
// to the image's length and the touched bytes past it, so call it off the run's path.
func (img *Image) Recycle(r []byte, touched uint64) {
	if touched > maxRecycled || touched > uint64(len(r)) {
		release(r)
		return
	}
	img.regions.mu.Lock()
	full := img.regions.closed || len(img.regions.idle[len(r)]) >= regionsPerSize
	img.regions.mu.Unlock()
	if full {
		release(r)
		return
	}
	img.CopyTo(r)
	if n := uint64(len(img.data)); touched > n {
		clear(r[n:touched])
	}
	img.regions.mu.Lock()
	defer img.regions.mu.Unlock()
	if img.regions.closed || len(img.regions.idle[len(r)]) >= regionsPerSize {
		release(r)
		return
	}
	if img.regions.idle == nil {
		img.regions.idle = map[int][][]byte{}
	}
	img.regions.idle[len(r)] = append(img.regions.idle[len(r)], r)
}

// closeRegions unmaps the idle regions; regions in use are unmapped when they come back.
func (img *Image) closeRegions() {
	img.regions.mu.Lock()
	defer img.regions.mu.Unlock()
	img.regions.closed = true
	for _, l := range img.regions.idle {
		for _, r := range l {
			release(r)
		}
	}
	img.regions.idle = nil
}
