// Package wasmbin reads the WebAssembly binary format for the module checker (internal/wasmcheck)
// and the rewriter (internal/interrupt). Both parse untrusted modules, and both are only sound if
// they read a module exactly as wazero v1.12 will: the checker bounds the counts wazero allocates
// by, and the rewriter must find every `loop` opcode, which a reader that disagreed with wazero
// about where an immediate ends could miss. This is that reader, once.
//
// Every read is bounded by the Reader's End, and every count is checked against the bytes left
// before anyone loops or allocates by it. Errors are *Error, at an offset into the module; each
// caller turns them into its own error type where they leave it.
package wasmbin

import "unicode/utf8"

// Reader walks a module's bytes without copying them. Reads stop at End (the end of the section,
// subsection or body being walked), so nothing can run into what follows; offsets in errors are
// into B, the whole module, whatever part of it the Reader walks.
type Reader struct {
	B   []byte // the module
	Pos int    // the next byte to read
	End int    // reads stop here
}

// Left is how many bytes remain before End.
func (r *Reader) Left() int { return r.End - r.Pos }

// Byte reads one byte.
func (r *Reader) Byte(what string) (byte, error) {
	if r.Pos >= r.End {
		return 0, Errorf(r.Pos, "%s: unexpected end", what)
	}
	b := r.B[r.Pos]
	r.Pos++
	return b, nil
}

// Zero reads one byte that must be 0x00: a reserved byte, such as the memory index of
// memory.size, memory.grow, memory.init/copy/fill and atomic.fence, which wazero requires as
// exactly one zero byte where the spec (with multi-memory) has a u32.
func (r *Reader) Zero(what string) error {
	b, err := r.Byte(what)
	if err == nil && b != 0 {
		err = Errorf(r.Pos-1, "%s: 0x%02x where wazero requires a single 0x00", what, b)
	}
	return err
}

// Skip steps over n bytes of fixed size (a float constant, a lane index).
func (r *Reader) Skip(n int, what string) error {
	if n < 0 || n > r.Left() {
		return Errorf(r.Pos, "%s: %d bytes needed, %d left", what, n, r.Left())
	}
	r.Pos += n
	return nil
}

// Bytes reads a length-prefixed byte vector and returns it as a subslice of the module. Use it
// for names whose UTF-8 is wazero's to check; Name checks it.
func (r *Reader) Bytes(what string) ([]byte, error) {
	start := r.Pos
	n, err := r.U32(what)
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(r.Left()) {
		return nil, Errorf(start, "%s: %d bytes declared, %d left", what, n, r.Left())
	}
	s := r.B[r.Pos : r.Pos+int(n)]
	r.Pos += int(n)
	return s, nil
}

// Name reads a name: a length-prefixed UTF-8 string (wazero refuses a module with a name that is
// not), returned as a subslice of the module.
func (r *Reader) Name(what string) ([]byte, error) {
	start := r.Pos
	s, err := r.Bytes(what)
	if err == nil && !utf8.Valid(s) {
		return nil, Errorf(start, "%s is not valid UTF-8", what)
	}
	return s, err
}

// Count reads a vector's length and checks that its elements, minSize bytes each at least (1 or
// more), fit in the bytes left: nothing is ever allocated or looped over by a count the bytes
// cannot hold.
func (r *Reader) Count(what string, minSize int) (uint32, error) {
	start := r.Pos
	n, err := r.U32(what)
	if err != nil {
		return 0, err
	}
	if err := r.Fit(start, what, n, minSize); err != nil {
		return 0, err
	}
	return n, nil
}

// Fit checks that n elements of minSize bytes at least (1 or more) fit in the bytes left, for a
// count read at offset at. Count is U32 and Fit; a caller that checks the count against a limit
// first, so as to report the limit, calls them apart.
func (r *Reader) Fit(at int, what string, n uint32, minSize int) error {
	if uint64(n)*uint64(minSize) > uint64(r.Left()) {
		return Errorf(at, "%s: %d declared, but the %d bytes left hold at most %d", what, n, r.Left(), r.Left()/minSize)
	}
	return nil
}
