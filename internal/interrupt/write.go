package interrupt

import (
	"math"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// newMemory is the memory section of a module that had no memory: one memory, 0 pages, maximum
// 0. It is there for the yield's memory.grow 0 and nothing else.
var newMemory = []byte{0x01, 0x01, 0x00, 0x00}

// write builds the instrumented module. Every size is computed first, so that the bound is
// checked before anything is allocated by it and the output is allocated once.
func (w *walker) write() ([]byte, error) {
	var exports []byte
	for _, e := range []struct {
		name string
		idx  uint32
	}{{StopGlobal, w.seqs.stop}, {BudgetGlobal, w.seqs.budget}, {StackGlobal, w.seqs.stack}} {
		exports = wasmbin.AppendU32(exports, uint32(len(e.name)))
		exports = wasmbin.AppendU32(append(append(exports, e.name...), 0x03), e.idx)
	}
	globals, err := w.grownVector(w.global, addedGlobals)
	if err != nil {
		return nil, err
	}
	if exports, err = w.grownVector(w.export, exports); err != nil {
		return nil, err
	}
	// The sections to write in place of the input's (or, if it has none, to add), by id.
	content := map[byte][]byte{secGlobal: globals, secExport: exports}
	if w.memories == 0 {
		content[secMemory] = newMemory // the input's memory section, if any, declares none
	}

	codeSize := uint64(0)
	if w.code >= 0 {
		s := w.secs[w.code]
		codeSize = uint64(s.end - s.content)
		if len(w.bodies) > 0 {
			codeSize = uint64(w.bodies[0].sizeAt - s.content)
		}
		for _, b := range w.bodies {
			n := w.newBodySize(b)
			if n > math.MaxUint32 {
				return nil, refuse(b.sizeAt, "an instrumented body of %d bytes", n)
			}
			codeSize += uint64(wasmbin.SizeU32(uint32(n))) + n
		}
		if codeSize > math.MaxUint32 {
			return nil, refuse(s.start, "an instrumented code section of %d bytes", codeSize)
		}
	}

	total := uint64(len(magic))
	added := map[byte]bool{}
	for id, c := range content {
		added[id] = true
		total += sectionSize(len(c))
	}
	for i, s := range w.secs {
		switch {
		case s.drop:
		case content[s.id] != nil && s.id != secCustom:
			added[s.id] = false
		case i == w.code:
			total += 1 + uint64(wasmbin.SizeU32(uint32(codeSize))) + codeSize
		default:
			total += uint64(s.end - s.start)
		}
	}
	if bound := 2*uint64(len(w.in)) + Slack; total > bound {
		return nil, refuse(0, "the instrumented module would be %d bytes, over %d", total, bound)
	}

	out := make([]byte, 0, total)
	out = append(out, magic...)
	for i, s := range w.secs {
		if s.id != secCustom {
			// A section the module lacks goes right before the first that must follow it.
			for _, id := range []byte{secMemory, secGlobal, secExport} {
				if added[id] && order[s.id] > order[id] {
					out, added[id] = appendSection(out, id, content[id]), false
				}
			}
		}
		switch {
		case s.drop:
		case content[s.id] != nil && s.id != secCustom:
			out = appendSection(out, s.id, content[s.id])
		case i == w.code:
			out = w.appendCode(out, s, uint32(codeSize))
		default:
			out = append(out, w.in[s.start:s.end]...)
		}
	}
	for _, id := range []byte{secMemory, secGlobal, secExport} {
		if added[id] {
			out = appendSection(out, id, content[id])
		}
	}
	if uint64(len(out)) != total {
		return nil, refuse(0, "wrote %d bytes, computed %d", len(out), total)
	}
	return out, nil
}

// added is how many globals (and exports of them) Instrument appends.
const added = 3

// grownVector is the contents of the vector section secs[idx] with the added entries appended
// (its count that many more), or of a new section holding those alone if idx is -1.
func (w *walker) grownVector(idx int, entries []byte) ([]byte, error) {
	if idx < 0 {
		return append([]byte{added}, entries...), nil
	}
	s := w.secs[idx]
	r := wasmbin.Reader{B: w.in, Pos: s.content, End: s.end}
	n, err := r.U32("count")
	if err != nil {
		return nil, err
	}
	if n > math.MaxUint32-added {
		return nil, refuse(s.content, "a vector of %d entries", n)
	}
	out := make([]byte, 0, 5+(s.end-r.Pos)+len(entries))
	out = wasmbin.AppendU32(out, n+added)
	out = append(out, w.in[r.Pos:s.end]...)
	return append(out, entries...), nil
}

// appendEdit appends what edit e writes in a function whose loop counter is local c (-1 if it
// counts in $budget), and returns how many input bytes it replaces.
func (w *walker) appendEdit(out []byte, e edit, c int64) ([]byte, int) {
	switch e.kind {
	case editEntry:
		return w.seqs.appendEntry(out, int32(e.val)), 0
	case editLoopOpen: // $Y: loop, the original block type, the yield
		out = append(append(out, 0x03), w.in[e.at+1:e.at+1+e.n]...)
		if c >= 0 {
			return w.seqs.appendLocalHead(out, uint32(c)), 0
		}
		return append(out, w.seqs.head...), 0
	case editLoopCheck:
		if c >= 0 {
			return w.seqs.appendLocalCheck(out, uint32(c), int32(e.val)), 0
		}
		return w.seqs.appendLoopCheck(out, int32(e.val)), 0
	case editLoopClose:
		return append(out, 0x0b), 0
	case editStackEnter:
		return w.seqs.appendEnter(out, int32(e.val), e.bt), 0
	case editStackLeave, editStackExit:
		if c >= 0 {
			out = w.seqs.appendCharge(out, uint32(c))
		}
		out = w.seqs.appendLeave(out, int32(e.val))
		if e.kind == editStackExit {
			out = append(out, 0x0b)
		}
		return out, 0
	case editGuard:
		return append(out, w.seqs.guardAfter(uint32(e.val))...), 0
	case editDecls:
		if c < 0 {
			return out, 0
		}
	case editLocal:
		if c >= 0 {
			out = append(out, counterDecl...)
		}
		return out, 0
	case editMark:
		if c >= 0 {
			out = appendMark(out, uint32(c))
		}
		return out, 0
	}
	return wasmbin.AppendU32(out, uint32(e.val)), e.n // editLabel, editDecls
}

// growth is how many bytes a body's edits add.
func (w *walker) growth(b fnBody) int {
	n := 0
	for _, e := range w.edits[b.edits[0]:b.edits[1]] {
		var replaced int
		w.scratch, replaced = w.appendEdit(w.scratch[:0], e, b.counter)
		n += len(w.scratch) - replaced
	}
	return n
}

func (w *walker) newBodySize(b fnBody) uint64 {
	return uint64(b.end-b.content) + uint64(w.growth(b))
}

// appendCode writes the code section, each body with its edits and its size re-encoded.
func (w *walker) appendCode(out []byte, s section, size uint32) []byte {
	out = wasmbin.AppendU32(append(out, secCode), size)
	if len(w.bodies) == 0 {
		return append(out, w.in[s.content:s.end]...)
	}
	out = append(out, w.in[s.content:w.bodies[0].sizeAt]...) // the body count, as it was
	for _, b := range w.bodies {
		out = wasmbin.AppendU32(out, uint32(w.newBodySize(b)))
		prev := b.content
		for _, e := range w.edits[b.edits[0]:b.edits[1]] {
			out = append(out, w.in[prev:e.at]...)
			var replaced int
			out, replaced = w.appendEdit(out, e, b.counter)
			prev = e.at + replaced
		}
		out = append(out, w.in[prev:b.end]...)
	}
	return out
}

func sectionSize(content int) uint64 {
	return 1 + uint64(wasmbin.SizeU32(uint32(content))) + uint64(content)
}

func appendSection(out []byte, id byte, content []byte) []byte {
	out = wasmbin.AppendU32(append(out, id), uint32(len(content)))
	return append(out, content...)
}

// selfCheck walks Instrument's output again, requiring $stop, $budget and $stack last among the
// globals and exported once each, a memory, the inserted sequences at every function entry,
// around every loop, before every return and after every wrapper, and no other instruction
// naming $stop, $budget or $stack.
func selfCheck(out []byte, q seqs) error {
	w := newWalker(out)
	w.verify = true
	w.seqs = q
	if err := w.module(); err != nil {
		return err
	}
	if w.guestGlobals != q.stop {
		return refuse(0, "the stop flag is global %d, not %d", w.guestGlobals, q.stop)
	}
	return nil
}
