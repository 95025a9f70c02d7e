package memimage

import (
	"errors"
	"fmt"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// pageSize is a wasm page, and the unit an image's length is rounded up to.
const pageSize = 1 << 16

// Split takes the active data segments out of a snapshotted module and returns the module
// without them and the memory image they made: the bytes instantiation would have copied in,
// zeros between them. The module and the image together instantiate exactly as wasm did.
//
// Only segments whose offset is an i32.const into memory 0 and that come after every passive
// segment are taken (removing one before a passive segment would renumber what memory.init and
// data.drop name); the others stay in the module and are applied by wazero as before. A module
// with none to take returns wasm itself and a nil Image.
//
// # Errors
//
// A module that does not parse (an *wasmbin.Error within the message), or whose segments reach
// past its memory's initial size (wazero would refuse to instantiate it).
func Split(wasm []byte) ([]byte, *Image, error) {
	m, err := parse(wasm)
	if err != nil {
		return nil, nil, fmt.Errorf("memimage: %w", err)
	}
	if !m.hasMemory || m.data == nil || m.firstTaken == len(m.segs) {
		return wasm, nil, nil
	}
	var end uint64
	for _, s := range m.segs[m.firstTaken:] {
		end = max(end, uint64(s.offset)+uint64(len(s.init)))
	}
	if end > uint64(m.minPages)*pageSize {
		return nil, nil, fmt.Errorf("memimage: the data segments reach byte %d, past the memory's initial %d pages", end, m.minPages)
	}
	img := make([]byte, (end+pageSize-1)/pageSize*pageSize)
	for _, s := range m.segs[m.firstTaken:] {
		copy(img[s.offset:], s.init)
	}
	return m.without(wasm), &Image{data: img}, nil
}

// segment is one data segment: where its bytes are in the module, and for an active one that
// can be taken, its offset and contents.
type segment struct {
	start, end int // its bytes in the module
	passive    bool
	takeable   bool // active, into memory 0, at an i32.const offset
	offset     uint32
	init       []byte
}

// module is what Split reads of a module.
type module struct {
	hasMemory bool // a memory of its own (an imported one is not the module's to start)
	minPages  uint32
	// data and dataCount are the data section's and the data count section's contents (start,
	// end) and their section headers' starts; nil when absent.
	data, dataCount *[3]int
	segs            []segment
	// firstTaken is the first segment taken: those from it on are all takeable and follow every
	// passive one.
	firstTaken int
}

func parse(wasm []byte) (*module, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm module")
	}
	m := &module{}
	r := &wasmbin.Reader{B: wasm, Pos: 8, End: len(wasm)}
	for r.Left() > 0 {
		head := r.Pos
		id, err := r.Byte("section id")
		if err != nil {
			return nil, err
		}
		body, err := r.Bytes("section")
		if err != nil {
			return nil, err
		}
		start := r.Pos - len(body)
		sec := &wasmbin.Reader{B: wasm, Pos: start, End: r.Pos}
		switch id {
		case 5:
			if err := m.memory(sec); err != nil {
				return nil, err
			}
		case 11:
			m.data = &[3]int{start, r.Pos, head}
			if err := m.segments(sec); err != nil {
				return nil, err
			}
		case 12:
			m.dataCount = &[3]int{start, r.Pos, head}
		}
	}
	m.firstTaken = len(m.segs)
	for m.firstTaken > 0 && m.segs[m.firstTaken-1].takeable {
		m.firstTaken--
	}
	return m, nil
}

// memory reads the memory section: one memory, whose initial size bounds the image.
func (m *module) memory(r *wasmbin.Reader) error {
	n, err := r.Count("memories", 2)
	if err != nil || n != 1 {
		return errors.Join(err, fmt.Errorf("%d memories: an image is of exactly one", n))
	}
	if _, err := r.Byte("memory limits"); err != nil {
		return err
	}
	m.hasMemory = true
	m.minPages, err = r.U32("memory minimum")
	return err
}

// segments reads the data section.
func (m *module) segments(r *wasmbin.Reader) error {
	n, err := r.Count("data segments", 2)
	if err != nil {
		return err
	}
	m.segs = make([]segment, 0, n)
	for range n {
		s := segment{start: r.Pos}
		flags, err := r.U32("data segment flags")
		if err != nil {
			return err
		}
		switch flags {
		case 1:
			s.passive = true
		case 0, 2:
			mem := uint32(0)
			if flags == 2 {
				if mem, err = r.U32("data segment memory"); err != nil {
					return err
				}
			}
			if s.takeable, s.offset, err = offsetOf(r); err != nil {
				return err
			}
			s.takeable = s.takeable && mem == 0
		default:
			return wasmbin.Errorf(s.start, "data segment flags %d", flags)
		}
		if s.init, err = r.Bytes("data segment"); err != nil {
			return err
		}
		s.end = r.Pos
		m.segs = append(m.segs, s)
	}
	return nil
}

// offsetOf reads an active segment's offset expression: takeable when it is `i32.const n; end`
// with n >= 0; any other constant expression is stepped over.
func offsetOf(r *wasmbin.Reader) (bool, uint32, error) {
	if r.Left() >= 1 && r.B[r.Pos] == 0x41 { // i32.const
		at := r.Pos
		r.Pos++
		v, err := r.I32("data segment offset")
		if err != nil {
			return false, 0, err
		}
		if end, err := r.Byte("data segment offset end"); err == nil && end == 0x0b && v >= 0 {
			return true, uint32(v), nil
		}
		r.Pos = at
	}
	return false, 0, r.ConstExpr()
}

// without is wasm with the segments from firstTaken on removed, and the data count section (if
// any) counting those left.
func (m *module) without(wasm []byte) []byte {
	keep := m.segs[:m.firstTaken]
	var data []byte
	data = wasmbin.AppendU32(data, uint32(len(keep)))
	for _, s := range keep {
		data = append(data, wasm[s.start:s.end]...)
	}
	out := make([]byte, 0, len(wasm)-(m.data[1]-m.data[0])+len(data))
	pos := 0
	if c := m.dataCount; c != nil { // before the code section, so before the data section
		out = append(out, wasm[pos:c[2]]...)
		out = appendSection(out, 12, wasmbin.AppendU32(nil, uint32(len(keep))))
		pos = c[1]
	}
	out = append(out, wasm[pos:m.data[2]]...)
	out = appendSection(out, 11, data)
	return append(out, wasm[m.data[1]:]...)
}

func appendSection(out []byte, id byte, content []byte) []byte {
	out = append(out, id)
	out = wasmbin.AppendU32(out, uint32(len(content)))
	return append(out, content...)
}
