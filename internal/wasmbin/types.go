package wasmbin

// The small encodings every section walker meets: value, global and tag types, and constant
// expressions, each read as wazero v1.12 (internal/wasm/binary) reads it with its default
// features, so that what is read here ends where wazero's read ends.

// ValType reads a value type: a number, vector or reference type byte, or (ref null? ht) with an
// s33 heap type, as wazero's decodeValueTypes and its locals decoder take them.
func (r *Reader) ValType(what string) error {
	b, err := r.Byte(what)
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x69:
		return nil
	case 0x63, 0x64:
		_, err = r.S33("heap type")
		return err
	}
	return Errorf(r.Pos-1, "%s: invalid value type 0x%02x", what, b)
}

// GlobalType reads a global's value type and mutability.
func (r *Reader) GlobalType() error {
	if err := r.ValType("global type"); err != nil {
		return err
	}
	mut, err := r.Byte("global mutability")
	if err == nil && mut > 1 {
		err = Errorf(r.Pos-1, "global mutability 0x%02x is not 0 or 1", mut)
	}
	return err
}

// TagType reads an exception tag's type: attribute 0x00 and a type index.
func (r *Reader) TagType() error {
	if err := r.Zero("tag attribute"); err != nil {
		return err
	}
	_, err := r.U32("tag type index")
	return err
}

// ConstExpr reads a constant expression up to its end, taking the instructions wazero's
// decodeConstantExpression takes with the default features: i32/i64/f32/f64.const, v128.const,
// global.get, ref.null, ref.func. Anything else is refused (extended-const is not enabled).
func (r *Reader) ConstExpr() error {
	for {
		start := r.Pos
		op, err := r.Byte("constant expression")
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41: // i32.const
			err = r.S32("i32.const")
		case 0x42: // i64.const
			err = r.S64("i64.const")
		case 0x43: // f32.const
			err = r.Skip(4, "f32.const")
		case 0x44: // f64.const
			err = r.Skip(8, "f64.const")
		case 0x23: // global.get
			_, err = r.U32("global.get index")
		case 0xd2: // ref.func
			_, err = r.U32("ref.func index")
		case 0xd0: // ref.null: an abstract heap type byte, or else a type index as a u32
			var t byte
			if t, err = r.Byte("ref.null type"); err == nil && t != 0x70 && t != 0x6f && t != 0x69 {
				r.Pos--
				_, err = r.U32("ref.null type")
			}
		case 0xfd: // v128.const: wazero reads its sub-opcode as one byte
			var sub byte
			if sub, err = r.Byte("vector opcode"); err == nil {
				if sub != 0x0c {
					return Errorf(start, "vector opcode 0x%02x in a constant expression", sub)
				}
				err = r.Skip(16, "v128.const")
			}
		default:
			return Errorf(start, "opcode 0x%02x in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}
