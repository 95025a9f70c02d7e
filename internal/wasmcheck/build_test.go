package wasmcheck

// Small helpers to write modules byte by byte in tests, hostile ones included: nothing here
// checks what it is given.

// leb is v as an unsigned LEB128.
func leb(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// cat concatenates byte strings.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// sec is a section: id, the size of the contents, the contents.
func sec(id byte, contents ...[]byte) []byte {
	c := cat(contents...)
	return cat([]byte{id}, leb(uint64(len(c))), c)
}

// vec is a vector of items with its true count.
func vec(items ...[]byte) []byte {
	return cat(leb(uint64(len(items))), cat(items...))
}

// str is a name: its length and its bytes.
func str(s string) []byte { return cat(leb(uint64(len(s))), []byte(s)) }

// mod is a module: the header and the sections.
func mod(sections ...[]byte) []byte {
	return cat([]byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}, cat(sections...))
}

// repeat is n copies of b.
func repeat(b []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// Pieces most test modules share.
var (
	typeVoid   = sec(1, vec([]byte{0x60, 0x00, 0x00})) // type 0: () -> ()
	oneFunc    = sec(3, vec([]byte{0x00}))             // function 0: type 0
	nopBody    = []byte{0x02, 0x00, 0x0b}              // size 2: no locals, end
	oneBody    = sec(10, vec(nopBody))                 // code for function 0
	i32Zero    = []byte{0x41, 0x00, 0x0b}              // i32.const 0 end
	funcref    = byte(0x70)                            // the funcref reference type
	tableNoMax = func(min uint64) []byte { return cat([]byte{funcref, 0x00}, leb(min)) }
	tableMax   = func(min, max uint64) []byte { return cat([]byte{funcref, 0x01}, leb(min), leb(max)) }
)
