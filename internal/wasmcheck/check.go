package wasmcheck

import (
	"bytes"
	"fmt"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// Info is what Check learned about a module: the runtime uses it for accounting and messages.
type Info struct {
	Functions         int // imported + defined
	ImportedFunctions int
	Types             int // counting each member of a rec group
	Imports, Exports  int
	Globals           int // imported + defined
	DataSegments      int
	ElemSegments      int
	ElemEntries       uint64
	CustomSections    int

	CodeBytes            int64  // sum of the function bodies' sizes
	LargestFunction      int    // bytes of the largest body
	LargestFunctionIndex int    // its index in the function index space (imports first), as in wasm-objdump
	Locals               uint64 // params + declared locals, summed over all functions
	MostLocals           int    // the most params + declared locals of one function

	Tables       []Table // imported first, in index order
	TableEntries uint64  // sum of the tables' maxima: 8 bytes of host memory an entry in wazero
	Memory       *Memory // nil if the module has none

	// NamesDropped counts the "name" custom sections left out of the returned module because
	// they were malformed, over a limit or redundant (names are optional: the spec says a bad
	// name section is ignored, but wazero would refuse the module). NamesError is why the first
	// one was.
	NamesDropped int
	NamesError   error

	// Changed is true when the returned module is a rewritten copy, not the input.
	Changed bool
}

// Table is one table as the module will run with it.
type Table struct {
	RefType  byte   // 0x70 funcref, 0x6F externref, 0x69 exnref, 0x63/0x64 (ref null? ht)
	Min, Max uint32 // Max is after rewriting: always set
	Imported bool
	Capped   bool // Check gave the table its maximum, or lowered the one it declared
}

// Memory is the module's memory, imported or defined.
type Memory struct {
	Min, Max uint32 // in 64 KiB pages; Max only means something when HasMax
	HasMax   bool
	Shared   bool
	Imported bool
}

// Section ids, as in the binary format.
const (
	secCustom byte = iota
	secType
	secImport
	secFunction
	secTable
	secMemory
	secGlobal
	secExport
	secStart
	secElement
	secCode
	secData
	secDataCount
	secTag
)

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory", "global",
	"export", "start", "element", "code", "data", "data count", "tag"}

var magic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Check walks every section of wasm and checks every declared count and size against l, and that
// each count fits in the bytes that follow, before anything is allocated by it. It returns what it
// found, and the module to compile: wasm itself when nothing needed changing, or a copy whose
// defined tables have a maximum no larger than their share of l.MaxTableEntries (so that
// table.grow past it returns -1, as the spec allows, instead of growing the host's memory) and
// without the "name" sections that were malformed or over a limit. Every other byte is copied as
// it is. Errors are a *LimitError (errors.Is ErrLimit) or a *FormatError (errors.Is ErrMalformed).
//
// Check of the returned module returns it unchanged.
func Check(wasm []byte, l Limits) (*Info, []byte, error) {
	l = l.withDefaults()
	if int64(len(wasm)) > l.MaxModuleBytes {
		return nil, nil, limitErr("the module", uint64(len(wasm)), uint64(l.MaxModuleBytes), "bytes", "maxModuleBytes")
	}
	w := &walker{l: l, r: wasmbin.Reader{B: wasm, End: len(wasm)}, info: &Info{}}
	if err := w.module(); err != nil {
		return nil, nil, formatError(err)
	}
	out := w.rewrite()
	if int64(len(out)) > l.MaxModuleBytes {
		return nil, nil, limitErr("the module once its tables have a maximum", uint64(len(out)), uint64(l.MaxModuleBytes), "bytes", "maxModuleBytes")
	}
	w.info.Changed = len(w.edits) > 0
	return w.info, out, nil
}

// walker holds the state of one Check.
type walker struct {
	l    Limits
	r    wasmbin.Reader
	info *Info

	typeParams []uint32 // the param count of each type, for MaxLocals
	// funcTypes is the function section's type indices (after its count), read in step with the
	// code section rather than stored.
	funcTypes wasmbin.Reader
	funcCount uint32
	codeSeen  bool
	memCount  int
	tableLeft uint64 // what remains of MaxTableEntries once imported tables took their maxima
	defined   []tableEntry
	tableSec  span // the table section, id byte to end
	namesKept bool
	edits     []edit
}

type span struct{ start, end int }

// edit replaces the bytes of at with with in the returned module.
type edit struct {
	at   span
	with []byte
}

func (w *walker) module() error {
	r := &w.r
	if len(r.B) < len(magic) || !bytes.Equal(r.B[:4], magic[:4]) {
		return malformed(0, "not a wasm module (too short, or no \\0asm magic)")
	}
	if !bytes.Equal(r.B[4:8], magic[4:]) {
		return malformed(4, "binary format version %x is not supported (only 1: core modules)", r.B[4:8])
	}
	r.Pos = 8
	w.tableLeft = w.l.MaxTableEntries
	var last byte
	for r.Pos < len(r.B) {
		secStart := r.Pos
		id := r.B[r.Pos]
		r.Pos++
		if id > secTag {
			return malformed(secStart, "unknown section id %d", id)
		}
		size, err := r.U32("section size")
		if err != nil {
			return wasmbin.Within(err, "%s section", sectionNames[id])
		}
		if uint64(size) > uint64(r.Left()) {
			return malformed(secStart, "%s section of %d bytes overruns the module (%d bytes left)", sectionNames[id], size, r.Left())
		}
		var ok bool
		if last, ok = sectionOrder(id, last); !ok {
			return malformed(secStart, "%s section out of order", sectionNames[id])
		}
		r.End = r.Pos + int(size)
		if err := w.section(id, span{secStart, r.End}); err != nil {
			return wasmbin.Within(err, "%s section", sectionNames[id])
		}
		if r.Pos != r.End {
			return malformed(r.Pos, "%s section's contents end %d bytes before its declared size", sectionNames[id], r.End-r.Pos)
		}
		r.End = len(r.B)
	}
	if !w.codeSeen && w.funcCount != 0 {
		return malformed(len(r.B), "the function section declares %d functions but there is no code section", w.funcCount)
	}
	return nil
}

// sectionOrder is wazero's checkSectionOrder: custom sections anywhere, tag between memory and
// global, data count between element and code, the others strictly increasing.
func sectionOrder(cur, prev byte) (byte, bool) {
	switch {
	case cur == secCustom:
		return prev, true
	case cur == secTag:
		return cur, prev <= secMemory
	case prev == secTag:
		return cur, cur >= secGlobal
	case cur == secDataCount:
		return cur, prev <= secElement
	case prev == secDataCount:
		return cur, cur >= secCode
	}
	return cur, cur > prev
}

func (w *walker) section(id byte, sec span) error {
	switch id {
	case secCustom:
		return w.custom(sec)
	case secType:
		return w.types()
	case secImport:
		return w.imports()
	case secFunction:
		return w.functions()
	case secTable:
		w.tableSec = sec
		return w.tables()
	case secMemory:
		return w.memories()
	case secGlobal:
		return w.globals()
	case secExport:
		return w.exports()
	case secStart:
		_, err := w.r.U32("start function index")
		return err
	case secElement:
		return w.elements()
	case secCode:
		return w.code()
	case secData:
		return w.data()
	case secDataCount:
		_, err := w.r.U32("data count")
		return err
	case secTag:
		return w.tags()
	}
	return nil
}

// custom walks a custom section: its name must be UTF-8 (wazero refuses the module otherwise);
// a "name" section is walked like the rest and dropped if it does not pass.
func (w *walker) custom(sec span) error {
	r := &w.r
	w.info.CustomSections++
	if uint64(w.info.CustomSections) > uint64(w.l.MaxCustomSections) {
		return limitErr("the number of custom sections", uint64(w.info.CustomSections), uint64(w.l.MaxCustomSections), "", "maxCustomSections")
	}
	name, err := r.Name("custom section name")
	if err != nil {
		return err
	}
	if string(name) != "name" {
		r.Pos = r.End
		return nil
	}
	err = w.names()
	if err == nil && w.namesKept {
		err = malformed(sec.start, "a second name section")
	}
	if err != nil {
		w.info.NamesDropped++
		if w.info.NamesError == nil {
			w.info.NamesError = fmt.Errorf("name section at byte %d dropped: %w", sec.start, formatError(err))
		}
		w.edits = append(w.edits, edit{at: sec})
	} else {
		w.namesKept = true
	}
	r.Pos, r.End = sec.end, sec.end
	return nil
}

// rewrite applies the edits (in module order) to a copy, or returns the module as it is.
func (w *walker) rewrite() []byte {
	if len(w.edits) == 0 {
		return w.r.B
	}
	n := len(w.r.B)
	for _, e := range w.edits {
		n += len(e.with) - (e.at.end - e.at.start)
	}
	out := make([]byte, 0, n)
	prev := 0
	for _, e := range w.edits {
		out = append(out, w.r.B[prev:e.at.start]...)
		out = append(out, e.with...)
		prev = e.at.end
	}
	return append(out, w.r.B[prev:]...)
}
