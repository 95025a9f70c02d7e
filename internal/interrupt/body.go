package interrupt

import (
	"math"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// Edits to a body, in the order of their offsets in the input. The writer applies them.
type editKind uint8

const (
	editEntry      editKind = iota // insert the function-entry sequence (weight val)
	editLoopOpen                   // insert `loop bt` and the yield before the loop (bt: n bytes after at)
	editLoopCheck                  // insert the loop's count (weight val) after its block type
	editLoopClose                  // insert the `end` of $Y after the loop's end
	editLabel                      // replace the n-byte u32 label at at by val
	editStackEnter                 // insert the stack count (weight val) and the wrapper's block (type bt)
	editStackLeave                 // insert the stack count's restore (weight val) before a return
	editStackExit                  // insert the restore and the function's new end after the wrapper's
	editGuard                      // insert the check of guarded global val after its global.set
	editDecls                      // a counted function: replace the n-byte count of local declarations by val
	editLocal                      // a counted function: insert the declaration of $c after the others
	editMark                       // a counted function: insert its marker after the wrapper opens
)

type edit struct {
	at   int
	n    int
	kind editKind
	val  int64
	bt   []byte // editStackEnter: the wrapper's block type
}

// frame is one open block of the body being decoded.
type frame struct {
	loops int  // loops (of the input) open up to this frame, this one included
	check int  // a loop's editLoopCheck, whose weight is known at its end; -1 otherwise
	start int  // a loop's offset in the input
	split bool // verify mode: a split loop $L, whose end must be followed by $Y's
}

// body decodes one function body, the fn-th, of type typeIdx: r from its locals to r.End, the end of the
// body. It returns where the instructions start, and appends to w.edits what the writer must
// change: the entry sequence, the stack count and the wrapper (stack.go), each loop split and
// counted, each branch label that crosses a loop made one deeper for each loop it crosses (its
// $Y is a new block in between), the stack count's restore before each return and after the
// wrapper. In verify mode (w.verify), the inserted sequences must already be there, and are
// stepped over.
//
// Every instruction is decoded, immediates included, because a `loop` opcode byte can only be
// told from the same byte inside an immediate by decoding everything before it.
func (w *walker) body(r *wasmbin.Reader, fn, typeIdx uint32) (instrStart int, err error) {
	declAt := r.Pos
	decls, err := r.Count("local declarations", 2)
	if err != nil {
		return 0, err
	}
	declLen, lastDecl := r.Pos-declAt, r.Pos
	locals := uint64(0)
	for i := uint32(0); i < decls; i++ {
		lastDecl = r.Pos
		n, err := r.U32("local count")
		if err != nil {
			return 0, err
		}
		locals += uint64(n)
		if err := r.ValType("local type"); err != nil {
			return 0, err
		}
	}
	instrStart = r.Pos
	t, err := w.typeAt(instrStart, typeIdx)
	if err != nil {
		return 0, err
	}
	w.own = uint64(t.params) + locals
	w.counter, w.loops, w.catches, w.chargeEnd = -1, false, false, -1
	bt, err := w.wrapperType(instrStart, typeIdx)
	if err != nil {
		return 0, err
	}
	first := len(w.edits)
	widest := uint64(0)                             // the widest call's parameters and results
	w.stack = append(w.stack[:0], frame{check: -1}) // the function's own block
	if w.verify {
		if err := w.seqs.matchEntry(r); err != nil {
			return 0, err
		}
		if err := w.seqs.matchEnter(r, bt); err != nil {
			return 0, err
		}
		w.push(false, -1, 0) // the wrapper
		if w.own > 0 && string(r.B[lastDecl:instrStart]) == string(counterDecl) {
			if mark := appendMark(w.scratch[:0], uint32(w.own-1)); string(r.B[r.Pos:min(r.Pos+len(mark), r.End)]) == string(mark) {
				w.counter = int64(w.own - 1)
				r.Pos += len(mark)
			}
		}
	} else {
		if decls == math.MaxUint32 || w.own >= math.MaxUint32 {
			return 0, refuse(declAt, "%d local declarations, %d locals: no room for the loop counter", decls, w.own)
		}
		w.edits = append(w.edits, edit{at: declAt, n: declLen, kind: editDecls, val: int64(decls) + 1},
			edit{at: instrStart, kind: editLocal},
			edit{at: instrStart, kind: editEntry, val: int64(weight(r.End - instrStart))},
			edit{at: instrStart, kind: editStackEnter, bt: bt},
			edit{at: instrStart, kind: editMark})
	}
	w.leaveEnd = -1
	for {
		if r.Pos >= r.End {
			return 0, refuse(r.Pos, "the body ends inside a block")
		}
		at := r.Pos
		op := r.B[r.Pos]
		r.Pos++
		switch ops[op] {
		case immNone:
			if isReturn(op) {
				err = w.leave(at)
			}
		case immBlock:
			err = blockType(r)
			w.push(false, -1, 0)
		case immLoop:
			err = w.loop(r, at)
		case immEnd:
			f := w.stack[len(w.stack)-1]
			w.stack = w.stack[:len(w.stack)-1]
			switch {
			case f.check >= 0:
				w.edits[f.check].val = int64(weight(at + 1 - f.start))
				w.edits = append(w.edits, edit{at: r.Pos, kind: editLoopClose})
			case f.split && (r.Pos >= r.End || r.B[r.Pos] != 0x0b):
				return 0, refuse(r.Pos, "a split loop's end not followed by its outer loop's")
			}
			if w.verify && len(w.stack) == 1 { // the wrapper's end: the charge, the restore, the function's end
				if err := w.matchCharge(r); err != nil {
					return 0, err
				}
				if err := w.seqs.matchLeave(r); err != nil {
					return 0, err
				}
				if err := expect(r, []byte{0x0b}); err != nil {
					return 0, err
				}
				w.stack = w.stack[:0]
			}
			if len(w.stack) == 0 {
				if r.Pos != r.End {
					return 0, refuse(r.Pos, "%d bytes after the function's end", r.End-r.Pos)
				}
				if !w.verify {
					if w.loops && !w.catches {
						w.counter = int64(w.own)
						locals++
					}
					w.edits = append(w.edits, edit{at: r.Pos, kind: editStackExit})
					fw := frameWeight(uint64(t.params), locals, widest, r.End-instrStart)
					if w.frames != nil {
						fw = int32(min(w.frames[fn], StackBytes+1))
					}
					for i := range w.edits[first:] {
						if e := &w.edits[first+i]; e.kind >= editStackEnter && e.kind <= editStackExit {
							e.val = int64(fw)
						}
					}
				}
				return instrStart, nil
			}
		case immLabel:
			err = w.label(r)
		case immU32:
			var idx uint32
			if idx, err = r.U32("index"); err == nil && (op == 0x10 || op == 0x12 || op == 0x14 || op == 0x15) {
				err = w.call(at, op, idx, &widest)
			} else if err == nil && op >= 0x20 && op <= 0x22 {
				err = w.local(at, idx)
			}
		case immU32x2:
			var idx uint32
			if idx, err = r.U32("type index"); err == nil {
				if _, err = r.U32("table index"); err == nil {
					err = w.call(at, op, idx, &widest)
				}
			}
		case immGlobal:
			var idx uint32
			if idx, err = r.U32("global index"); err == nil && w.verify && idx == w.seqs.stack {
				err = w.matchReturn(r, at)
			} else if err == nil && w.verify && idx == w.seqs.budget && w.counter >= 0 {
				r.Pos = at
				err = w.matchCharge(r)
			} else if err == nil && idx >= w.guestGlobals {
				// An invalid module that names a global past its own would, once the globals
				// are appended, name $stop or $budget: a guest could clear its own flag.
				err = refuse(at, "global index %d: the module has %d globals", idx, w.guestGlobals)
			} else if g := w.seqs.guardAfter(idx); err == nil && op == 0x24 && g != nil {
				if w.verify {
					err = expect(r, g)
				} else {
					w.edits = append(w.edits, edit{at: r.Pos, kind: editGuard, val: int64(idx)})
				}
			}
		case immMemarg:
			err = memarg(r)
		case immZero:
			err = r.Zero("memory index")
		case immS32:
			err = r.S32("i32.const")
		case immS64:
			err = r.S64("i64.const")
		case immF32:
			err = r.Skip(4, "f32.const")
		case immF64:
			err = r.Skip(8, "f64.const")
		case immBrTable:
			err = w.brTable(r)
		case immSelectT:
			err = selectTypes(r)
		case immTryTable:
			w.catches = true
			if w.verify && w.counter >= 0 {
				err = refuse(at, "a try_table in a function that counts its loops in a local")
			} else {
				err = w.tryTable(r)
			}
			w.push(false, -1, 0)
		case immRefNull:
			_, err = r.U32("heap type")
		case immMisc:
			err = misc(r)
		case immSIMD:
			err = simd(r)
		case immAtomic:
			err = atomic(r)
		default:
			return 0, refuse(at, "opcode 0x%02x", op)
		}
		if err != nil {
			return 0, wasmbin.Within(err, "opcode 0x%02x at byte %d", op, at)
		}
	}
}

// call notes the width of the call at `at` (op, its first immediate idx) in *widest, and if it
// is a tail call, the restore before it.
func (w *walker) call(at int, op byte, idx uint32, widest *uint64) error {
	n, err := w.callArity(at, op, idx)
	if err != nil {
		return err
	}
	*widest = max(*widest, n)
	if isReturn(op) {
		return w.leave(at)
	}
	return nil
}

// leave records the restore before the return or tail call at `at`, or in verify mode requires
// it there.
func (w *walker) leave(at int) error {
	if w.verify {
		if w.leaveEnd != at {
			return refuse(at, "a return without the stack count's restore before it")
		}
		return nil
	}
	w.edits = append(w.edits, edit{at: at, kind: editStackLeave})
	return nil
}

// local checks the index of a local.get, local.set or local.tee at `at`: guest code names only
// the function's own locals, and never $c.
func (w *walker) local(at int, idx uint32) error {
	if w.verify && int64(idx) == w.counter {
		return refuse(at, "local %d is the loop counter", idx)
	}
	if uint64(idx) >= w.own {
		return refuse(at, "local %d: the function has %d", idx, w.own)
	}
	return nil
}

// matchCharge, in verify mode, steps over the charge of $c at r.Pos, which a counted function
// has before each restore of the stack count, and must be followed by one. A function that does
// not count its loops has none.
func (w *walker) matchCharge(r *wasmbin.Reader) error {
	if w.counter < 0 {
		return nil
	}
	w.scratch = w.seqs.appendCharge(w.scratch[:0], uint32(w.counter))
	if err := expect(r, w.scratch); err != nil {
		return err
	}
	if restore := wasmbin.AppendU32([]byte{0x23}, w.seqs.stack); string(r.B[r.Pos:min(r.Pos+len(restore), r.End)]) != string(restore) {
		return refuse(r.Pos, "the loop counter's charge not followed by the stack count's restore")
	}
	w.chargeEnd = r.Pos
	return nil
}

// matchReturn, in verify mode, steps over a restore that starts at `at` (r is past its first
// global.get) and must be followed by a return or a tail call. In a counted function, the charge
// comes right before it.
func (w *walker) matchReturn(r *wasmbin.Reader, at int) error {
	if w.counter >= 0 && w.chargeEnd != at {
		return refuse(at, "a return without the loop counter's charge before it")
	}
	r.Pos = at
	if err := w.seqs.matchLeave(r); err != nil {
		return err
	}
	if r.Pos >= r.End || !isReturn(r.B[r.Pos]) {
		return refuse(r.Pos, "the stack count's restore not followed by a return")
	}
	w.leaveEnd = r.Pos
	return nil
}

// push opens a block: a loop of the input (counted, with its check edit and offset) or not.
func (w *walker) push(loop bool, check int, start int) {
	f := frame{loops: w.stack[len(w.stack)-1].loops, check: check, start: start}
	if loop {
		f.loops++
	}
	w.stack = append(w.stack, f)
}

// loop reads a loop's block type, at the `loop` opcode at. It records the split: $Y and the
// yield before the loop, the count after its block type (its weight set at its end). In verify
// mode, it requires $Y, the yield, the original loop with the same block type, and the count.
func (w *walker) loop(r *wasmbin.Reader, at int) error {
	btStart := r.Pos
	if err := blockType(r); err != nil {
		return err
	}
	bt := r.B[btStart:r.Pos]
	if !w.verify {
		w.loops = true
		w.edits = append(w.edits,
			edit{at: at, n: len(bt), kind: editLoopOpen},
			edit{at: r.Pos, kind: editLoopCheck})
		w.push(true, len(w.edits)-1, at)
		return nil
	}
	// This is $Y: the yield, then the loop it wraps.
	head := w.seqs.head
	if w.counter >= 0 {
		w.scratch = w.seqs.appendLocalHead(w.scratch[:0], uint32(w.counter))
		head = w.scratch
	}
	if err := expect(r, head); err != nil {
		return err
	}
	if err := expect(r, loopOpcode); err != nil {
		return err
	}
	if err := expect(r, bt); err != nil {
		return err
	}
	check := w.seqs.matchLoopCheck
	if w.counter >= 0 {
		check = w.matchLocalCheck
	}
	if err := check(r); err != nil {
		return err
	}
	w.push(false, -1, 0)
	w.push(false, -1, 0)
	w.stack[len(w.stack)-1].split = true
	return nil
}

var loopOpcode = []byte{0x03}

// label reads a branch label and, if it crosses loops of the input, records it one deeper for
// each: the $Y of each such loop is a block between the branch and its target. (A branch to a
// loop itself stays: its $Y is outside it.) In verify mode, labels are read as they are.
func (w *walker) label(r *wasmbin.Reader) error {
	at := r.Pos
	d, err := r.U32("label")
	if err != nil {
		return err
	}
	top := len(w.stack) - 1
	if uint64(d) > uint64(top) {
		return refuse(at, "label %d with %d blocks open", d, top+1)
	}
	if w.verify && uint64(d) == uint64(top) {
		return refuse(at, "a branch to the function's own label, past the stack count's restore")
	}
	if crossed := w.stack[top].loops - w.stack[top-int(d)].loops; crossed != 0 && !w.verify {
		nd := int64(d) + int64(crossed)
		if nd > math.MaxUint32 {
			return refuse(at, "label %d crosses %d loops", d, crossed)
		}
		w.edits = append(w.edits, edit{at: at, n: r.Pos - at, kind: editLabel, val: nd})
	}
	return nil
}

// blockType reads a block type: an s33 that is 0x40 (empty), a value type, or a type index
// (multi-value), and for (ref null? ht), as wazero's DecodeBlockType reads them, a heap type
// after it.
func blockType(r *wasmbin.Reader) error {
	v, err := r.S33("block type")
	if err != nil {
		return err
	}
	if v == -29 || v == -28 { // 0x63 (ref null ht), 0x64 (ref ht)
		_, err = r.S33("block heap type")
	}
	return err
}

// memarg reads an alignment and an offset. wazero refuses an alignment of 32 or more, which is
// also where multi-memory's memory-index flag (bit 6) would be: nothing here reads a memory
// index there.
func memarg(r *wasmbin.Reader) error {
	at := r.Pos
	align, err := r.U32("alignment")
	if err != nil {
		return err
	}
	if align >= 32 {
		return refuse(at, "alignment exponent %d (wazero takes less than 32)", align)
	}
	_, err = r.U32("offset")
	return err
}

// brTable reads br_table's labels and its default label. The count is checked against the bytes
// left, a byte a label at least, before anything is read by it.
func (w *walker) brTable(r *wasmbin.Reader) error {
	n, err := r.Count("br_table labels", 1)
	if err != nil {
		return err
	}
	for i := uint64(0); i <= uint64(n); i++ { // n labels and the default
		if err := w.label(r); err != nil {
			return err
		}
	}
	return nil
}

// selectTypes reads select's type vector. wazero takes one type only, its count as the single
// byte 1, and these value types.
func selectTypes(r *wasmbin.Reader) error {
	n, err := r.Byte("select type count")
	if err != nil {
		return err
	}
	if n != 1 {
		return refuse(r.Pos-1, "select with %d types (wazero takes the single byte 1)", n)
	}
	b, err := r.Byte("select type")
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return nil
	case 0x63, 0x64:
		_, err = r.S33("select heap type")
		return err
	}
	return refuse(r.Pos-1, "select type 0x%02x", b)
}

// tryTable reads try_table's block type and catch clauses (exception handling): catch and
// catch_ref carry a tag and a label, catch_all and catch_all_ref a label. The labels count from
// the block around the try_table, as wazero reads them before it opens the try_table's.
func (w *walker) tryTable(r *wasmbin.Reader) error {
	if err := blockType(r); err != nil {
		return err
	}
	n, err := r.Count("catch clauses", 2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		kind, err := r.Byte("catch kind")
		if err != nil {
			return err
		}
		switch kind {
		case 0x00, 0x01:
			if _, err := r.U32("catch tag"); err != nil {
				return err
			}
		case 0x02, 0x03:
		default:
			return refuse(r.Pos-1, "catch kind 0x%02x", kind)
		}
		if err := w.label(r); err != nil {
			return err
		}
	}
	return nil
}

// misc reads a 0xFC instruction: its u32 sub-opcode and immediates.
func misc(r *wasmbin.Reader) error {
	at := r.Pos
	sub, err := r.U32("0xFC sub-opcode")
	if err != nil {
		return err
	}
	switch miscImm(sub) {
	case miscNone:
		return nil
	case miscU32:
		_, err = r.U32("index")
	case miscU32Zero:
		if _, err = r.U32("data index"); err == nil {
			err = r.Zero("memory index")
		}
	case miscZeroZero:
		if err = r.Zero("memory index"); err == nil {
			err = r.Zero("memory index")
		}
	case miscZero:
		err = r.Zero("memory index")
	case miscU32x2:
		if _, err = r.U32("index"); err == nil {
			_, err = r.U32("table index")
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
func simd(r *wasmbin.Reader) error {
	at := r.Pos
	sub, err := r.Byte("0xFD sub-opcode")
	if err != nil {
		return err
	}
	if sub >= 0x80 {
		hi, err := r.Byte("0xFD sub-opcode")
		if err != nil {
			return err
		}
		if hi != 0x01 {
			return refuse(at, "0xFD sub-opcode bytes 0x%02x 0x%02x (wazero reads one byte)", sub, hi)
		}
	}
	switch simdImm[sub] {
	case simdNone:
		return nil
	case simdMemarg:
		return memarg(r)
	case simdMemLane:
		if err := memarg(r); err != nil {
			return err
		}
		return r.Skip(1, "lane")
	case simdLane:
		return r.Skip(1, "lane")
	case simdBytes16:
		return r.Skip(16, "16 immediate bytes")
	}
	return refuse(at, "0xFD sub-opcode 0x%02x", sub)
}

// atomic reads a 0xFE instruction (threads). The waits are refused: a guest blocked in
// memory.atomic.wait runs no check, so only wazero's own handling of it may apply.
func atomic(r *wasmbin.Reader) error {
	at := r.Pos
	sub, err := r.Byte("0xFE sub-opcode")
	if err != nil {
		return err
	}
	switch {
	case sub == atomicFence:
		return r.Zero("atomic.fence")
	case sub == atomicNotify, sub >= atomicFirst && sub <= atomicLast:
		return memarg(r)
	case sub == atomicWait32, sub == atomicWait64:
		return refuse(at, "memory.atomic.wait: a blocked guest runs no check")
	}
	return refuse(at, "0xFE sub-opcode 0x%02x", sub)
}
