package interrupt

import "math"

// write builds the instrumented module. Every size is computed first, so that the bound is
// checked before anything is allocated by it and the output is allocated once.
func (w *walker) write() ([]byte, error) {
	stop := w.guestGlobals
	exportEntry := appendU32(nil, uint32(len(StopGlobal)))
	exportEntry = append(exportEntry, StopGlobal...)
	exportEntry = appendU32(append(exportEntry, 0x03), stop)
	globals, err := w.grownVector(w.global, stopGlobalEntry)
	if err != nil {
		return nil, err
	}
	exports, err := w.grownVector(w.export, exportEntry)
	if err != nil {
		return nil, err
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
			codeSize += uint64(sizeU32(uint32(n))) + n
		}
		if codeSize > math.MaxUint32 {
			return nil, refuse(s.start, "an instrumented code section of %d bytes", codeSize)
		}
	}

	total := uint64(len(magic))
	if w.global < 0 {
		total += sectionSize(len(globals))
	}
	if w.export < 0 {
		total += sectionSize(len(exports))
	}
	for i, s := range w.secs {
		switch {
		case s.drop:
		case i == w.global:
			total += sectionSize(len(globals))
		case i == w.export:
			total += sectionSize(len(exports))
		case i == w.code:
			total += 1 + uint64(sizeU32(uint32(codeSize))) + codeSize
		default:
			total += uint64(s.end - s.start)
		}
	}
	if bound := 2*uint64(len(w.in)) + Slack; total > bound {
		return nil, refuse(0, "the instrumented module would be %d bytes, over %d", total, bound)
	}

	out := make([]byte, 0, total)
	out = append(out, magic...)
	globalDone, exportDone := w.global >= 0, w.export >= 0
	for i, s := range w.secs {
		if s.id != secCustom {
			// A section the module lacks goes right before the first that must follow it.
			if !globalDone && order[s.id] > order[secGlobal] {
				out, globalDone = appendSection(out, secGlobal, globals), true
			}
			if !exportDone && order[s.id] > order[secExport] {
				out, exportDone = appendSection(out, secExport, exports), true
			}
		}
		switch {
		case s.drop:
		case i == w.global:
			out = appendSection(out, secGlobal, globals)
		case i == w.export:
			out = appendSection(out, secExport, exports)
		case i == w.code:
			out = w.appendCode(out, s, uint32(codeSize))
		default:
			out = append(out, w.in[s.start:s.end]...)
		}
	}
	if !globalDone {
		out = appendSection(out, secGlobal, globals)
	}
	if !exportDone {
		out = appendSection(out, secExport, exports)
	}
	if uint64(len(out)) != total {
		return nil, refuse(0, "wrote %d bytes, computed %d", len(out), total)
	}
	return out, nil
}

// grownVector is the contents of the vector section secs[idx] with entry appended (its count
// one more), or of a new section holding entry alone if idx is -1.
func (w *walker) grownVector(idx int, entry []byte) ([]byte, error) {
	if idx < 0 {
		return append([]byte{0x01}, entry...), nil
	}
	s := w.secs[idx]
	r := reader{b: w.in, pos: s.content, end: s.end}
	n, err := r.u32("count")
	if err != nil {
		return nil, err
	}
	if n == math.MaxUint32 {
		return nil, refuse(s.content, "a vector of 2^32-1 entries")
	}
	out := make([]byte, 0, 5+(s.end-r.pos)+len(entry))
	out = appendU32(out, n+1)
	out = append(out, w.in[r.pos:s.end]...)
	return append(out, entry...), nil
}

func (w *walker) newBodySize(b fnBody) uint64 {
	return uint64(b.end-b.content) + uint64((1+b.loops)*len(w.check))
}

// appendCode writes the code section: each body with its size re-encoded, the check after its
// locals and after each of its loops' block types.
func (w *walker) appendCode(out []byte, s section, size uint32) []byte {
	out = appendU32(append(out, secCode), size)
	if len(w.bodies) == 0 {
		return append(out, w.in[s.content:s.end]...)
	}
	out = append(out, w.in[s.content:w.bodies[0].sizeAt]...) // the body count, as it was
	loops := w.loops
	for _, b := range w.bodies {
		out = appendU32(out, uint32(w.newBodySize(b)))
		out = append(out, w.in[b.content:b.instr]...)
		out = append(out, w.check...)
		prev := b.instr
		for _, at := range loops[:b.loops] {
			out = append(out, w.in[prev:at]...)
			out = append(out, w.check...)
			prev = at
		}
		out = append(out, w.in[prev:b.end]...)
		loops = loops[b.loops:]
	}
	return out
}

func sectionSize(content int) uint64 {
	return 1 + uint64(sizeU32(uint32(content))) + uint64(content)
}

func appendSection(out []byte, id byte, content []byte) []byte {
	out = appendU32(append(out, id), uint32(len(content)))
	return append(out, content...)
}

// selfCheck walks Instrument's output again, requiring the stop global last among the globals
// and exported once as StopGlobal, the check at the start of every body and after every loop's
// block type, and no other instruction naming the stop global.
func selfCheck(out []byte, stop uint32) error {
	w := newWalker(out)
	w.verify = true
	w.check = stopCheck(stop)
	if err := w.module(); err != nil {
		return err
	}
	if w.guestGlobals != stop {
		return refuse(0, "the stop global is %d, not %d", w.guestGlobals, stop)
	}
	return nil
}
