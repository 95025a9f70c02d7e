package interrupt

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

// u32 reads an unsigned LEB128 of at most 5 bytes whose unused bits are zero (wazero's
// LoadUint32 and DecodeUint32).
func (r *reader) u32(what string) (uint32, error) {
	start := r.pos
	var v uint32
	for i := 0; i < 5; i++ {
		if r.pos >= r.end {
			return 0, refuse(start, "%s: truncated LEB128", what)
		}
		b := r.b[r.pos]
		r.pos++
		if b < 0x80 {
			if i == 4 && b&0xf0 != 0 {
				return 0, refuse(start, "%s: LEB128 overflows 32 bits", what)
			}
			return v | uint32(b)<<(7*i), nil
		}
		v |= uint32(b&0x7f) << (7 * i)
	}
	return 0, refuse(start, "%s: LEB128 longer than 5 bytes", what)
}

// s32 skips a signed LEB128 of at most 5 bytes (wazero's LoadInt32: on the fifth byte, the bits
// past bit 31 must repeat the sign).
func (r *reader) s32(what string) error {
	start := r.pos
	var v int32
	for i := 0; i < 5; i++ {
		b, err := r.byte(what)
		if err != nil {
			return err
		}
		v |= int32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if i == 4 {
				if unused := b & 0x30; (v < 0 && unused != 0x30) || (v >= 0 && unused != 0) {
					return refuse(start, "%s: LEB128 overflows 32 bits", what)
				}
			}
			return nil
		}
	}
	return refuse(start, "%s: LEB128 longer than 5 bytes", what)
}

// s64 skips a signed LEB128 of at most 10 bytes (wazero's LoadInt64).
func (r *reader) s64(what string) error {
	start := r.pos
	var v int64
	for i := 0; i < 10; i++ {
		b, err := r.byte(what)
		if err != nil {
			return err
		}
		v |= int64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if i == 9 {
				if unused := b & 0x3e; (v < 0 && unused != 0x3e) || (v >= 0 && unused != 0) {
					return refuse(start, "%s: LEB128 overflows 64 bits", what)
				}
			}
			return nil
		}
	}
	return refuse(start, "%s: LEB128 longer than 10 bytes", what)
}

// s33 reads a signed 33-bit LEB128 of at most 5 bytes (a block type or a heap type) and returns
// its value. wazero's DecodeInt33AsInt64 also takes a fifth byte with its continuation bit set
// and then reads the next byte as an instruction; the spec does not allow that, nor does this.
func (r *reader) s33(what string) (int64, error) {
	start := r.pos
	var v int64
	for i := 0; i < 5; i++ {
		b, err := r.byte(what)
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			shift := 7 * (i + 1)
			if shift < 33 && b&0x40 != 0 {
				v |= -1 << shift // sign-extend
			}
			if i == 4 {
				v &= 1<<33 - 1
				if v&(1<<32) != 0 {
					v -= 1 << 33
				}
				if unused := b & 0x20; (v < 0 && unused != 0x20) || (v >= 0 && unused != 0) {
					return 0, refuse(start, "%s: LEB128 overflows 33 bits", what)
				}
			}
			return v, nil
		}
	}
	return 0, refuse(start, "%s: LEB128 longer than 5 bytes", what)
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
