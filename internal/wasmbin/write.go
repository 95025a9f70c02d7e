package wasmbin

// AppendU32 appends v as an unsigned LEB128 of the fewest bytes: how both the checker and the
// rewriter re-encode the counts and sizes they change.
func AppendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// SizeU32 is the length of AppendU32's encoding of v, for sizing an output before writing it.
func SizeU32(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
