package wasmcheck

import (
	"fmt"
	"unicode/utf8"
)

// reader walks a module's bytes without copying them. Reads stop at end (the end of the section
// being walked), so nothing can run into the next section; offsets in errors are into the module.
// The LEB128 decoders accept exactly the encodings wazero v1.12's internal/leb128 does, so both
// read the same values and stop at the same byte.
type reader struct {
	b   []byte
	pos int
	end int
}

func (r *reader) left() int { return r.end - r.pos }

func (r *reader) errAt(off int, format string, args ...any) error {
	return &FormatError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (r *reader) byte(what string) (byte, error) {
	if r.pos >= r.end {
		return 0, r.errAt(r.pos, "%s: unexpected end of section", what)
	}
	b := r.b[r.pos]
	r.pos++
	return b, nil
}

func (r *reader) skip(n int, what string) error {
	if n < 0 || n > r.left() {
		return r.errAt(r.pos, "%s: %d bytes declared, %d left in the section", what, n, r.left())
	}
	r.pos += n
	return nil
}

// u32 reads an unsigned LEB128 of at most 5 bytes whose unused bits are zero.
func (r *reader) u32(what string) (uint32, error) {
	start := r.pos
	var v uint32
	for i := 0; i < 5; i++ {
		if r.pos >= r.end {
			return 0, r.errAt(start, "%s: truncated LEB128", what)
		}
		b := r.b[r.pos]
		r.pos++
		if b < 0x80 {
			if i == 4 && b&0xf0 != 0 {
				return 0, r.errAt(start, "%s: LEB128 overflows 32 bits", what)
			}
			return v | uint32(b)<<(7*i), nil
		}
		v |= uint32(b&0x7f) << (7 * i)
	}
	return 0, r.errAt(start, "%s: LEB128 longer than 5 bytes", what)
}

// s32 skips a signed LEB128 of at most 5 bytes (wazero's decodeInt32 acceptance).
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
					return r.errAt(start, "%s: LEB128 overflows 32 bits", what)
				}
			}
			return nil
		}
	}
	return r.errAt(start, "%s: LEB128 longer than 5 bytes", what)
}

// s64 skips a signed LEB128 of at most 10 bytes (wazero's decodeInt64 acceptance).
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
					return r.errAt(start, "%s: LEB128 overflows 64 bits", what)
				}
			}
			return nil
		}
	}
	return r.errAt(start, "%s: LEB128 longer than 10 bytes", what)
}

// s33 skips a signed 33-bit LEB128 (a heap type) of at most 5 bytes. wazero's decoder also takes
// a fifth byte with its continuation bit set; the spec does not, nor does this.
func (r *reader) s33(what string) error {
	start := r.pos
	var v int64
	for i := 0; i < 5; i++ {
		b, err := r.byte(what)
		if err != nil {
			return err
		}
		v |= int64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if i == 4 {
				v &= 1<<33 - 1
				if v&(1<<32) != 0 {
					v -= 1 << 33
				}
				if unused := b & 0x20; (v < 0 && unused != 0x20) || (v >= 0 && unused != 0) {
					return r.errAt(start, "%s: LEB128 overflows 33 bits", what)
				}
			}
			return nil
		}
	}
	return r.errAt(start, "%s: LEB128 longer than 5 bytes", what)
}

// name reads a length-prefixed UTF-8 string, returning it as a subslice of the module.
func (r *reader) name(what string) ([]byte, error) {
	start := r.pos
	n, err := r.u32(what)
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(r.left()) {
		return nil, r.errAt(start, "%s: %d bytes declared, %d left in the section", what, n, r.left())
	}
	s := r.b[r.pos : r.pos+int(n)]
	if !utf8.Valid(s) {
		return nil, r.errAt(start, "%s is not valid UTF-8", what)
	}
	r.pos += int(n)
	return s, nil
}

// count reads a vector's length n and checks it twice before anything uses it: base+n against
// max (the limit, a LimitError for field; base counts what earlier sections declared, such as
// imported functions), then n against the bytes left, each element needing at least minSize.
func (r *reader) count(what string, base uint64, minSize int, max uint64, field string) (uint32, error) {
	start := r.pos
	n, err := r.u32(what)
	if err != nil {
		return 0, err
	}
	if base+uint64(n) > max {
		return 0, limitErr(what, base+uint64(n), max, "", field)
	}
	if uint64(n)*uint64(minSize) > uint64(r.left()) {
		return 0, r.errAt(start, "%s: %d declared, but the %d bytes left in the section hold at most %d", what, n, r.left(), r.left()/minSize)
	}
	return n, nil
}

// noLimit is count's max for vectors that only need to fit their bytes.
const noLimit = ^uint64(0) >> 1

// within prefixes a FormatError's message with where it happened (a LimitError names that in
// What already). Only called on the error path, so the formatting costs nothing otherwise.
func within(err error, format string, args ...any) error {
	if fe, ok := err.(*FormatError); ok {
		fe.Msg = fmt.Sprintf(format, args...) + ": " + fe.Msg
	}
	return err
}
