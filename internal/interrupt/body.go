package interrupt

// body decodes one function body: r from its locals to r.end, the end of the body. It returns
// where the instructions start and appends to w.loops the offset just past each loop's block
// type, where the stop check goes. In verify mode (w.verify), the check must already be at the
// start of the instructions and after each loop, and is stepped over.
//
// Every instruction is decoded, immediates included, because a `loop` opcode byte can only be
// told from the same byte inside an immediate by decoding everything before it.
func (w *walker) body(r *reader) (instrStart int, err error) {
	decls, err := r.count("local declarations", 2)
	if err != nil {
		return 0, err
	}
	for i := uint32(0); i < decls; i++ {
		if _, err := r.u32("local count"); err != nil {
			return 0, err
		}
		if err := r.valtype("local type"); err != nil {
			return 0, err
		}
	}
	instrStart = r.pos
	if err := w.stepOverCheck(r); err != nil {
		return 0, err
	}
	depth := 1 // the function's own block
	for {
		if r.pos >= r.end {
			return 0, refuse(r.pos, "the body ends inside a block")
		}
		at := r.pos
		op := r.b[r.pos]
		r.pos++
		switch ops[op] {
		case immNone:
		case immBlock:
			err = r.blockType()
			depth++
		case immLoop:
			if err = r.blockType(); err == nil {
				w.loops = append(w.loops, r.pos)
				err = w.stepOverCheck(r)
			}
			depth++
		case immEnd:
			if depth--; depth == 0 {
				if r.pos != r.end {
					return 0, refuse(r.pos, "%d bytes after the function's end", r.end-r.pos)
				}
				return instrStart, nil
			}
		case immU32:
			_, err = r.u32("index")
		case immU32x2:
			if _, err = r.u32("type index"); err == nil {
				_, err = r.u32("table index")
			}
		case immGlobal:
			var idx uint32
			if idx, err = r.u32("global index"); err == nil && idx >= w.guestGlobals {
				// An invalid module that names a global past its own would, once the stop
				// global is appended, name the stop global: a guest could clear its own flag.
				err = refuse(at, "global index %d: the module has %d globals", idx, w.guestGlobals)
			}
		case immMemarg:
			err = r.memarg()
		case immZero:
			err = r.zero("memory index")
		case immS32:
			err = r.s32("i32.const")
		case immS64:
			err = r.s64("i64.const")
		case immF32:
			err = r.skip(4, "f32.const")
		case immF64:
			err = r.skip(8, "f64.const")
		case immBrTable:
			err = r.brTable()
		case immSelectT:
			err = r.selectTypes()
		case immTryTable:
			err = r.tryTable()
			depth++
		case immRefNull:
			_, err = r.u32("heap type")
		case immMisc:
			err = r.misc()
		case immSIMD:
			err = r.simd()
		case immAtomic:
			err = r.atomic()
		default:
			return 0, refuse(at, "opcode 0x%02x", op)
		}
		if err != nil {
			return 0, within(err, "opcode 0x%02x at byte %d", op, at)
		}
	}
}

// stepOverCheck, in verify mode, requires the stop check at r.pos and steps over it.
func (w *walker) stepOverCheck(r *reader) error {
	if !w.verify {
		return nil
	}
	if r.left() < len(w.check) || string(r.b[r.pos:r.pos+len(w.check)]) != string(w.check) {
		return refuse(r.pos, "no stop check here")
	}
	r.pos += len(w.check)
	return nil
}

// valtype reads a value type: a number, vector or reference type byte, or (ref null? ht) with
// an s33 heap type, as wazero's locals decoder takes them.
func (r *reader) valtype(what string) error {
	b, err := r.byte(what)
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x69:
		return nil
	case 0x63, 0x64:
		_, err = r.s33("heap type")
		return err
	}
	return refuse(r.pos-1, "%s: value type 0x%02x", what, b)
}

// blockType reads a block type: an s33 that is 0x40 (empty), a value type, or a type index
// (multi-value), and for (ref null? ht), as wazero's DecodeBlockType reads them, a heap type
// after it.
func (r *reader) blockType() error {
	v, err := r.s33("block type")
	if err != nil {
		return err
	}
	if v == -29 || v == -28 { // 0x63 (ref null ht), 0x64 (ref ht)
		_, err = r.s33("block heap type")
	}
	return err
}

// memarg reads an alignment and an offset. wazero refuses an alignment of 32 or more, which is
// also where multi-memory's memory-index flag (bit 6) would be: nothing here reads a memory
// index there.
func (r *reader) memarg() error {
	at := r.pos
	align, err := r.u32("alignment")
	if err != nil {
		return err
	}
	if align >= 32 {
		return refuse(at, "alignment exponent %d (wazero takes less than 32)", align)
	}
	_, err = r.u32("offset")
	return err
}

// brTable reads br_table's labels and its default label. The count is checked against the bytes
// left, a byte a label at least, before anything is read by it.
func (r *reader) brTable() error {
	n, err := r.count("br_table labels", 1)
	if err != nil {
		return err
	}
	for i := uint64(0); i <= uint64(n); i++ { // n labels and the default
		if _, err := r.u32("br_table label"); err != nil {
			return err
		}
	}
	return nil
}

// selectTypes reads select's type vector. wazero takes one type only, its count as the single
// byte 1, and these value types.
func (r *reader) selectTypes() error {
	n, err := r.byte("select type count")
	if err != nil {
		return err
	}
	if n != 1 {
		return refuse(r.pos-1, "select with %d types (wazero takes the single byte 1)", n)
	}
	b, err := r.byte("select type")
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return nil
	case 0x63, 0x64:
		_, err = r.s33("select heap type")
		return err
	}
	return refuse(r.pos-1, "select type 0x%02x", b)
}

// tryTable reads try_table's block type and catch clauses (exception handling): catch and
// catch_ref carry a tag and a label, catch_all and catch_all_ref a label.
func (r *reader) tryTable() error {
	if err := r.blockType(); err != nil {
		return err
	}
	n, err := r.count("catch clauses", 2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		kind, err := r.byte("catch kind")
		if err != nil {
			return err
		}
		switch kind {
		case 0x00, 0x01:
			if _, err := r.u32("catch tag"); err != nil {
				return err
			}
		case 0x02, 0x03:
		default:
			return refuse(r.pos-1, "catch kind 0x%02x", kind)
		}
		if _, err := r.u32("catch label"); err != nil {
			return err
		}
	}
	return nil
}

// misc reads a 0xFC instruction: its u32 sub-opcode and immediates.
func (r *reader) misc() error {
	at := r.pos
	sub, err := r.u32("0xFC sub-opcode")
	if err != nil {
		return err
	}
	switch miscImm(sub) {
	case miscNone:
		return nil
	case miscU32:
		_, err = r.u32("index")
	case miscU32Zero:
		if _, err = r.u32("data index"); err == nil {
			err = r.zero("memory index")
		}
	case miscZeroZero:
		if err = r.zero("memory index"); err == nil {
			err = r.zero("memory index")
		}
	case miscZero:
		err = r.zero("memory index")
	case miscU32x2:
		if _, err = r.u32("index"); err == nil {
			_, err = r.u32("table index")
		}
	default:
		return refuse(at, "0xFC sub-opcode %d", sub)
	}
	return err
}

// simd reads a 0xFD instruction. wazero reads the sub-opcode as one byte; for sub-opcodes from
// 0x80 the spec's u32 is that byte and 0x01, which wazero reads as a nop after the instruction.
// Only that form is taken: any other second byte would be read as a different instruction by
// wazero than by the spec.
func (r *reader) simd() error {
	at := r.pos
	sub, err := r.byte("0xFD sub-opcode")
	if err != nil {
		return err
	}
	if sub >= 0x80 {
		hi, err := r.byte("0xFD sub-opcode")
		if err != nil {
			return err
		}
		if hi != 0x01 {
			return refuse(at, "0xFD sub-opcode bytes 0x%02x 0x%02x (wazero reads one byte)", sub, hi)
		}
	}
	switch simd[sub] {
	case simdNone:
		return nil
	case simdMemarg:
		return r.memarg()
	case simdMemLane:
		if err := r.memarg(); err != nil {
			return err
		}
		return r.skip(1, "lane")
	case simdLane:
		return r.skip(1, "lane")
	case simdBytes16:
		return r.skip(16, "16 immediate bytes")
	}
	return refuse(at, "0xFD sub-opcode 0x%02x", sub)
}

// atomic reads a 0xFE instruction (threads). The waits are refused: a guest blocked in
// memory.atomic.wait runs no check, so only wazero's own handling of it may apply.
func (r *reader) atomic() error {
	at := r.pos
	sub, err := r.byte("0xFE sub-opcode")
	if err != nil {
		return err
	}
	switch {
	case sub == atomicFence:
		return r.zero("atomic.fence")
	case sub == atomicNotify, sub >= atomicFirst && sub <= atomicLast:
		return r.memarg()
	case sub == atomicWait32, sub == atomicWait64:
		return refuse(at, "memory.atomic.wait: a blocked guest runs no check")
	}
	return refuse(at, "0xFE sub-opcode 0x%02x", sub)
}
