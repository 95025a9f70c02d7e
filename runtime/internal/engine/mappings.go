package engine

import "sync"

// Returning a run's memory mappings to the OS dominated a small run: munmap of a mapping whose
// pages were touched costs tens of microseconds (page freeing and TLB shootdowns on every core
// the process ran on), ten times what the rest of a trivial run costs. So a mapping whose run
// touched little is zeroed and kept for the next run instead, a few per size: clearing what was
// touched is cheaper than unmapping it, and the next run's first touches find the pages already
// there. A run never sees another's bytes: everything the previous run could reach (its memory's
// length) is cleared before the mapping is pooled, and nothing past that length was ever written.
const (
	// poolMaxTouched is the most a pooled mapping may have had touched: clearing more would cost
	// more than unmapping, and would keep that much resident while idle.
	poolMaxTouched = 1 << 20
	// poolPerSize bounds the idle mappings of one size, so an idle runtime holds at most
	// poolPerSize × poolMaxTouched resident per size in use.
	poolPerSize = 8
)

var mappings = mappingPool{idle: map[int][][]byte{}}

type mappingPool struct {
	mu   sync.Mutex
	idle map[int][][]byte // by mapping size
}

// get returns a zeroed mapping of n bytes, pooled or new.
func (p *mappingPool) get(n uint64) ([]byte, error) {
	p.mu.Lock()
	if l := p.idle[int(n)]; len(l) > 0 {
		b := l[len(l)-1]
		p.idle[int(n)] = l[:len(l)-1]
		p.mu.Unlock()
		return b, nil
	}
	p.mu.Unlock()
	return mapMemory(n)
}

// put takes back a mapping of which the first touched bytes may have been written: it is cleared
// and pooled, or unmapped when too much was touched or the pool is full.
func (p *mappingPool) put(b []byte, touched uint64) {
	if touched > poolMaxTouched {
		unmapMemory(b)
		return
	}
	clear(b[:touched])
	p.mu.Lock()
	if l := p.idle[len(b)]; len(l) < poolPerSize {
		p.idle[len(b)] = append(l, b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	unmapMemory(b)
}
