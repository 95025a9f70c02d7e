package engine

import "testing"

func newTestPool() *mappingPool {
	return &mappingPool{idle: map[int][]idleMapping{}, held: map[int]int{}}
}

// mapped maps n bytes and writes to the first touched of them.
func mapped(t *testing.T, n, touched int) []byte {
	t.Helper()
	b, err := mapMemory(uint64(n))
	if err != nil {
		t.Skipf("no mappings here: %v", err)
	}
	for i := 0; i < touched; i += 512 {
		b[i] = 0xa5
	}
	return b
}

func TestAPooledMappingComesBackZero(t *testing.T) {
	p := newTestPool()
	b := mapped(t, 1<<20, 64<<10)
	p.put(b, 64<<10)
	got, err := p.get(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &b[0] {
		t.Fatal("the mapping given back was not reused")
	}
	for i, c := range got {
		if c != 0 {
			t.Fatalf("byte %d of the reused mapping is %#x, not zero", i, c)
		}
	}
	if p.resident != 0 || p.held[1<<20] != 0 {
		t.Fatalf("after get: resident %d, held %d; want 0, 0", p.resident, p.held[1<<20])
	}
	unmapMemory(got)
}

// What idle mappings keep resident is bounded, all sizes together: a mapping that would take
// the pool past poolMaxIdle is unmapped, not kept.
func TestIdleMappingsStayWithinTheirBytes(t *testing.T) {
	p := newTestPool()
	const size, touched = 32 << 20, 24 << 20 // three of them are over poolMaxIdle
	for range 3 {
		p.put(mapped(t, size, touched), touched)
	}
	if n := len(p.idle[size]); n != 2 || p.resident != 2*touched {
		t.Fatalf("%d mappings idle holding %d bytes; want 2 holding %d", n, p.resident, 2*touched)
	}
	for _, m := range p.idle[size] {
		unmapMemory(m.b)
	}
}

func TestIdleMappingsStayWithinTheirCount(t *testing.T) {
	p := newTestPool()
	const size = 64 << 10
	for range poolPerSize + 3 {
		p.put(mapped(t, size, 4096), 4096)
	}
	if n := len(p.idle[size]); n != poolPerSize {
		t.Fatalf("%d mappings of one size idle, want %d", n, poolPerSize)
	}
	for _, m := range p.idle[size] {
		unmapMemory(m.b)
	}
}
