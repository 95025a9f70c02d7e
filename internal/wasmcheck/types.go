package wasmcheck

import "strconv"

// The walkers of the small encodings sections share: value and reference types, global and tag
// types, constant expressions.

func itoa(i int) string { return strconv.Itoa(i) }

// valtype reads a value type: a number, vector or reference type, or (ref null? ht) with an s33
// heap type, as wazero's decodeValueTypes and its locals decoder take them.
func (r *reader) valtype(what string) error {
	start := r.pos
	b, err := r.byte(what)
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x69:
		return nil
	case 0x63, 0x64:
		return r.s33("heap type")
	}
	return r.errAt(start, "%s: invalid value type 0x%02x", what, b)
}

// refType reads a table's reference type.
func (r *reader) refType(what string) (byte, error) {
	start := r.pos
	b, err := r.byte(what)
	if err != nil {
		return 0, err
	}
	switch b {
	case 0x70, 0x6f, 0x69:
		return b, nil
	case 0x63, 0x64:
		return b, r.s33("heap type")
	}
	return 0, r.errAt(start, "%s: invalid reference type 0x%02x", what, b)
}

// elemRefType reads an element segment's reference type (wazero's decodeElementRefType: funcref,
// externref or a (ref null? ht)).
func (r *reader) elemRefType() error {
	start := r.pos
	b, err := r.byte("element type")
	if err != nil {
		return err
	}
	switch b {
	case 0x70, 0x6f:
		return nil
	case 0x63, 0x64:
		return r.s33("heap type")
	}
	return r.errAt(start, "invalid element reference type 0x%02x", b)
}

// elemKind reads an element segment's element kind, which is 0x00 (funcref).
func (r *reader) elemKind() error {
	b, err := r.byte("element kind")
	if err == nil && b != 0x00 {
		err = r.errAt(r.pos-1, "element kind 0x%02x is not 0x00", b)
	}
	return err
}

func (r *reader) globalType() error {
	if err := r.valtype("global type"); err != nil {
		return err
	}
	mut, err := r.byte("global mutability")
	if err == nil && mut > 1 {
		err = r.errAt(r.pos-1, "global mutability 0x%02x is not 0 or 1", mut)
	}
	return err
}

// tagType reads an exception tag's type: attribute 0x00 and a type index.
func (r *reader) tagType() error {
	attr, err := r.byte("tag attribute")
	if err != nil {
		return err
	}
	if attr != 0x00 {
		return r.errAt(r.pos-1, "tag attribute 0x%02x is not 0x00", attr)
	}
	_, err = r.u32("tag type index")
	return err
}

// constExpr reads a constant expression up to its end, taking the instructions wazero's
// decodeConstantExpression takes with the default features: i32/i64/f32/f64.const, v128.const,
// global.get, ref.null, ref.func. Anything else is malformed (extended-const is not enabled).
func (r *reader) constExpr() error {
	for {
		start := r.pos
		op, err := r.byte("constant expression")
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41: // i32.const
			err = r.s32("i32.const")
		case 0x42: // i64.const
			err = r.s64("i64.const")
		case 0x43: // f32.const
			err = r.skip(4, "f32.const")
		case 0x44: // f64.const
			err = r.skip(8, "f64.const")
		case 0x23: // global.get
			_, err = r.u32("global.get index")
		case 0xd2: // ref.func
			_, err = r.u32("ref.func index")
		case 0xd0: // ref.null: an abstract heap type byte, or a type index
			var t byte
			if t, err = r.byte("ref.null type"); err == nil && t != 0x70 && t != 0x6f && t != 0x69 {
				r.pos--
				_, err = r.u32("ref.null type")
			}
		case 0xfd: // v128.const: wazero reads its sub-opcode as one byte
			var sub byte
			if sub, err = r.byte("vector opcode"); err == nil {
				if sub != 0x0c {
					return r.errAt(start, "vector opcode 0x%02x in a constant expression", sub)
				}
				err = r.skip(16, "v128.const")
			}
		default:
			return r.errAt(start, "opcode 0x%02x in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}
