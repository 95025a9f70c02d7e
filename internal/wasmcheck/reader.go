package wasmcheck

import (
	"fmt"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/internal/leb128"
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

// The integers, read as wazero reads them (package leb128), reported in this package's words.

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

// s33 skips a heap type.
func (r *reader) s33(what string) error {
	_, next, err := leb128.S33(r.b, r.pos, r.end)
	return r.leb(what, next, err)
}

// leb moves to next and words a leb128 error as a FormatError (an end inside the integer as
// byte words it).
func (r *reader) leb(what string, next int, err error) error {
	r.pos = next
	e, ok := err.(*leb128.Error)
	switch {
	case !ok:
		return err
	case e.Short:
		return r.errAt(e.Offset, "%s: unexpected end of section", what)
	}
	return r.errAt(e.Offset, "%s: %s", what, e.Msg)
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
