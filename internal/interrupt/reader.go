package interrupt

import "github.com/skillbox-dev/skillbox/internal/leb128"

// reader walks a module's bytes without copying them. Reads stop at end (the end of the section
// or body being walked), so nothing can run into what follows; offsets in refusals are into the
// module.
//
// Every LEB128 read accepts a subset of what wazero v1.12's internal/leb128 accepts and, when it
// accepts, stops at the byte wazero stops at. That is the property the rewrite rests on: if this
// reader and wazero disagreed about where an immediate ends, a `loop` opcode could hide inside
// what one of them takes for an immediate. Where wazero is laxer than the spec (a fifth s33 byte
// with its continuation bit set), this reader refuses, and the module falls back.
type reader struct {
	b   []byte
	pos int
	end int
}

func (r *reader) left() int { return r.end - r.pos }

func (r *reader) byte(what string) (byte, error) {
	if r.pos >= r.end {
		return 0, refuse(r.pos, "%s: unexpected end", what)
	}
	b := r.b[r.pos]
	r.pos++
	return b, nil
}

// zero reads one byte that must be 0x00: the reserved memory index of memory.size, memory.grow,
// memory.init/copy/fill and atomic.fence, which wazero requires as exactly one zero byte.
func (r *reader) zero(what string) error {
	b, err := r.byte(what)
	if err == nil && b != 0 {
		err = refuse(r.pos-1, "%s: 0x%02x where wazero requires a single 0x00", what, b)
	}
	return err
}

func (r *reader) skip(n int, what string) error {
	if n < 0 || n > r.left() {
		return refuse(r.pos, "%s: %d bytes needed, %d left", what, n, r.left())
	}
	r.pos += n
	return nil
}

// The integers, read as wazero reads them (package leb128), refused in this package's words.

func (r *reader) u32(what string) (uint32, error) {
	v, next, err := leb128.U32(r.b, r.pos, r.end)
	return v, r.leb(what, next, err)
}

func (r *reader) s32(what string) error {
	next, err := leb128.S32(r.b, r.pos, r.end)
	return r.leb(what, next, err)
}

func (r *reader) s64(what string) error {
	next, err := leb128.S64(r.b, r.pos, r.end)
	return r.leb(what, next, err)
}

// s33 reads a block type or a heap type.
func (r *reader) s33(what string) (int64, error) {
	v, next, err := leb128.S33(r.b, r.pos, r.end)
	return v, r.leb(what, next, err)
}

// leb moves to next and words a leb128 error as a refusal (an end inside the integer as byte
// words it).
func (r *reader) leb(what string, next int, err error) error {
	r.pos = next
	e, ok := err.(*leb128.Error)
	switch {
	case !ok:
		return err
	case e.Short:
		return refuse(e.Offset, "%s: unexpected end", what)
	}
	return refuse(e.Offset, "%s: %s", what, e.Msg)
}

// name reads a length-prefixed name and returns it as a subslice of the module. Its UTF-8 is
// wazero's to check: nothing here depends on it.
func (r *reader) name(what string) ([]byte, error) {
	start := r.pos
	n, err := r.u32(what)
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(r.left()) {
		return nil, refuse(start, "%s: %d bytes declared, %d left", what, n, r.left())
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

// count reads a vector's length and checks that its elements, minSize bytes each at least, fit
// in the bytes left: nothing is ever allocated or looped over by a count the bytes cannot hold.
func (r *reader) count(what string, minSize int) (uint32, error) {
	start := r.pos
	n, err := r.u32(what)
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(minSize) > uint64(r.left()) {
		return 0, refuse(start, "%s: %d declared, but %d bytes are left", what, n, r.left())
	}
	return n, nil
}

// appendU32 appends v as an unsigned LEB128 of the fewest bytes.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// sizeU32 is the length of appendU32's encoding of v.
func sizeU32(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
