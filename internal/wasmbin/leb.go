package wasmbin

import "github.com/skillbox-dev/skillbox/internal/leb128"

// The integers, read as wazero reads them (package leb128: where wazero is laxer than the spec, as
// with a fifth s33 byte whose continuation bit is set, it refuses) and stopping at the byte
// wazero stops at, reported as *Error.

// U32 reads an unsigned 32-bit LEB128: an index, a count, a size.
func (r *Reader) U32(what string) (uint32, error) {
	v, next, err := leb128.U32(r.B, r.Pos, r.End)
	return v, r.leb(what, next, err)
}

// S32 steps over a signed 32-bit LEB128 (i32.const).
func (r *Reader) S32(what string) error {
	next, err := leb128.S32(r.B, r.Pos, r.End)
	return r.leb(what, next, err)
}

// I32 reads a signed 32-bit LEB128 (an i32.const's value).
func (r *Reader) I32(what string) (int32, error) {
	v, next, err := leb128.I32(r.B, r.Pos, r.End)
	return v, r.leb(what, next, err)
}

// S64 steps over a signed 64-bit LEB128 (i64.const).
func (r *Reader) S64(what string) error {
	next, err := leb128.S64(r.B, r.Pos, r.End)
	return r.leb(what, next, err)
}

// S33 reads a signed 33-bit LEB128: a block type or a heap type.
func (r *Reader) S33(what string) (int64, error) {
	v, next, err := leb128.S33(r.B, r.Pos, r.End)
	return v, r.leb(what, next, err)
}

// leb moves to next and words a leb128 error as an *Error (an end inside the integer as Byte
// words it).
func (r *Reader) leb(what string, next int, err error) error {
	r.Pos = next
	e, ok := err.(*leb128.Error)
	switch {
	case !ok:
		return err
	case e.Short:
		return Errorf(e.Offset, "%s: unexpected end", what)
	}
	return Errorf(e.Offset, "%s: %s", what, e.Msg)
}
