// Package leb128 decodes the LEB128 integers of the WebAssembly binary format, accepting exactly
// what wazero v1.12's internal/leb128 accepts (where wazero is laxer than the spec, as with a
// fifth s33 byte whose continuation bit is set, it refuses) and stopping at the byte wazero stops
// at. The module checker (internal/wasmcheck) and the rewriter (internal/interrupt) both rest on
// reading a module exactly as wazero will; this is that rule, once.
//
// Each decoder reads b[pos:end] and returns the position after the integer; its errors are
// *Error, which each caller words in its own terms.
package leb128

// Error is an integer that could not be read. Short says the bytes ended inside a signed
// integer, at Offset (the caller reports that like any other read past its end); otherwise Msg
// says what is wrong with the integer that starts at Offset.
type Error struct {
	Offset int
	Short  bool
	Msg    string
}

func (e *Error) Error() string {
	if e.Short {
		return "unexpected end"
	}
	return e.Msg
}

func fail(off int, msg string) *Error { return &Error{Offset: off, Msg: msg} }

// U32 reads an unsigned LEB128 of at most 5 bytes whose unused bits are zero (wazero's
// LoadUint32 and DecodeUint32). Bytes ending inside it are "truncated LEB128" at its start.
func U32(b []byte, pos, end int) (uint32, int, error) {
	start := pos
	var v uint32
	for i := 0; i < 5; i++ {
		if pos >= end {
			return 0, pos, fail(start, "truncated LEB128")
		}
		c := b[pos]
		pos++
		if c < 0x80 {
			if i == 4 && c&0xf0 != 0 {
				return 0, pos, fail(start, "LEB128 overflows 32 bits")
			}
			return v | uint32(c)<<(7*i), pos, nil
		}
		v |= uint32(c&0x7f) << (7 * i)
	}
	return 0, pos, fail(start, "LEB128 longer than 5 bytes")
}

// S32 skips a signed LEB128 of at most 5 bytes (wazero's LoadInt32: on the fifth byte, the bits
// past bit 31 must repeat the sign).
func S32(b []byte, pos, end int) (int, error) {
	_, next, err := I32(b, pos, end)
	return next, err
}

// I32 reads what S32 skips: a signed LEB128 of at most 5 bytes, as an int32.
func I32(b []byte, pos, end int) (int32, int, error) {
	start := pos
	var v int32
	for i := 0; i < 5; i++ {
		if pos >= end {
			return 0, pos, &Error{Offset: pos, Short: true}
		}
		c := b[pos]
		pos++
		v |= int32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i == 4 {
				if unused := c & 0x30; (v < 0 && unused != 0x30) || (v >= 0 && unused != 0) {
					return 0, pos, fail(start, "LEB128 overflows 32 bits")
				}
			}
			if shift := 7 * (i + 1); shift < 32 && c&0x40 != 0 {
				v |= -1 << shift // sign-extend
			}
			return v, pos, nil
		}
	}
	return 0, pos, fail(start, "LEB128 longer than 5 bytes")
}

// S64 skips a signed LEB128 of at most 10 bytes (wazero's LoadInt64).
func S64(b []byte, pos, end int) (int, error) {
	start := pos
	var v int64
	for i := 0; i < 10; i++ {
		if pos >= end {
			return pos, &Error{Offset: pos, Short: true}
		}
		c := b[pos]
		pos++
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if i == 9 {
				if unused := c & 0x3e; (v < 0 && unused != 0x3e) || (v >= 0 && unused != 0) {
					return pos, fail(start, "LEB128 overflows 64 bits")
				}
			}
			return pos, nil
		}
	}
	return pos, fail(start, "LEB128 longer than 10 bytes")
}

// S33 reads a signed 33-bit LEB128 of at most 5 bytes (a block type or a heap type). wazero's
// DecodeInt33AsInt64 also takes a fifth byte with its continuation bit set and then reads the
// next byte as an instruction; the spec does not allow that, nor does this.
func S33(b []byte, pos, end int) (int64, int, error) {
	start := pos
	var v int64
	for i := 0; i < 5; i++ {
		if pos >= end {
			return 0, pos, &Error{Offset: pos, Short: true}
		}
		c := b[pos]
		pos++
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			shift := 7 * (i + 1)
			if shift < 33 && c&0x40 != 0 {
				v |= -1 << shift // sign-extend
			}
			if i == 4 {
				v &= 1<<33 - 1
				if v&(1<<32) != 0 {
					v -= 1 << 33
				}
				if unused := c & 0x20; (v < 0 && unused != 0x20) || (v >= 0 && unused != 0) {
					return 0, pos, fail(start, "LEB128 overflows 33 bits")
				}
			}
			return v, pos, nil
		}
	}
	return 0, pos, fail(start, "LEB128 longer than 5 bytes")
}
