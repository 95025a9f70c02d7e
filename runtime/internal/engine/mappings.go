package engine

import "sync"

// Returning a run's memory mappings to the OS dominated a run: munmap of a mapping whose pages
// were touched costs tens of microseconds (page freeing and TLB shootdowns on every core the
// process ran on), and the next run's fresh mapping then faults every page it touches in again,
// ~10 µs a page on a virtual machine. So a mapping is cleared and kept for the next run instead:
// clearing a touched page costs well under a microsecond, and the next run's first touches find
// the pages already there. A standard Go skill touches a few MiB at start: its full run took
// 13.9 ms with mappings over 1 MiB unmapped, 3.2 ms with them kept (BenchmarkEngineGoHello).
//
// A run never sees another's bytes: everything the previous run could reach (its memory's
// length) is cleared before the mapping is pooled, and nothing past that length was ever
// written. What stays resident while idle is bounded, all sizes together.
const (
	// poolMaxIdle bounds the bytes idle mappings hold resident (what their runs touched, now
	// zero): past it, a mapping given back is unmapped.
	poolMaxIdle = 64 << 20
	// poolPerSize bounds the idle mappings of one size.
	poolPerSize = 8
)

var mappings = mappingPool{idle: map[int][]idleMapping{}, held: map[int]int{}}

type mappingPool struct {
	mu   sync.Mutex
	idle map[int][]idleMapping // by mapping size
	// held counts, by size, the idle mappings and those being cleared to join them; resident is
	// what all of them had touched.
	held     map[int]int
	resident uint64
}

type idleMapping struct {
	b       []byte
	touched uint64
}

// get returns a zeroed mapping of n bytes, pooled or new.
func (p *mappingPool) get(n uint64) ([]byte, error) {
	p.mu.Lock()
	if l := p.idle[int(n)]; len(l) > 0 {
		m := l[len(l)-1]
		p.idle[int(n)] = l[:len(l)-1]
		p.held[int(n)]--
		p.resident -= m.touched
		p.mu.Unlock()
		return m.b, nil
	}
	p.mu.Unlock()
	return mapMemory(n)
}

// put takes back a mapping of which the first touched bytes may have been written: it is cleared
// and pooled, or unmapped when the pool has no room for it.
func (p *mappingPool) put(b []byte, touched uint64) {
	if !p.reserve(len(b), touched) {
		unmapMemory(b)
		return
	}
	clear(b[:touched])
	p.mu.Lock()
	p.idle[len(b)] = append(p.idle[len(b)], idleMapping{b, touched})
	p.mu.Unlock()
}

// reserve counts touched more bytes and one more mapping of size n as idle, if both bounds
// allow it. The slot is taken before the clear, outside the lock, so that two runs given back
// at once cannot both pass the bounds.
func (p *mappingPool) reserve(n int, touched uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resident+touched > poolMaxIdle || p.held[n] >= poolPerSize {
		return false
	}
	p.held[n]++
	p.resident += touched
	return true
}
