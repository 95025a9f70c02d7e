package wasmcheck

import (
	"strconv"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// The reference types only the table and element walkers read. Value, global and tag types and
// constant expressions are wasmbin's, shared with the rewriter.

func itoa(i int) string { return strconv.Itoa(i) }

// refType reads a table's reference type.
func refType(r *wasmbin.Reader, what string) (byte, error) {
	start := r.Pos
	b, err := r.Byte(what)
	if err != nil {
		return 0, err
	}
	switch b {
	case 0x70, 0x6f, 0x69:
		return b, nil
	case 0x63, 0x64:
		_, err = r.S33("heap type")
		return b, err
	}
	return 0, malformed(start, "%s: invalid reference type 0x%02x", what, b)
}

// elemRefType reads an element segment's reference type (wazero's decodeElementRefType: funcref,
// externref or a (ref null? ht)).
func elemRefType(r *wasmbin.Reader) error {
	start := r.Pos
	b, err := r.Byte("element type")
	if err != nil {
		return err
	}
	switch b {
	case 0x70, 0x6f:
		return nil
	case 0x63, 0x64:
		_, err = r.S33("heap type")
		return err
	}
	return malformed(start, "invalid element reference type 0x%02x", b)
}
