package interrupt

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes"
	"github.com/tetratelabs/wazero/api"
)

// StopGlobal is the export name of the stop flag: a mutable i32, 0 while the guest may run.
// Once it is not 0, the guest traps ("unreachable") at its next yield. Use Stop to set it.
const StopGlobal = "__skillbox_stop"

// BudgetGlobal is the export name of the budget counter (see checks.go). Stop sets it to 0 so
// that the next function entry or loop iteration yields and sees the flag.
const BudgetGlobal = "__skillbox_budget"

// Slack is the growth Instrument allows past twice the input: a module of a few bytes gains
// globals, exports, a memory and checks that can be larger than itself.
const Slack = 1024

// Instrument returns wasm rewritten so that it can be stopped cheaply (see Stop): mutable i32
// globals are appended and exported as StopGlobal and BudgetGlobal; every function entry and
// every loop iteration counts down the budget, and when it is spent the guest yields to the Go
// scheduler (memory.grow 0, run in Go by wazero) and traps if the stop flag is set. A third,
// StackGlobal, bounds the call stack (stack.go), each call weighed by an estimate of its frame.
// If the module has no memory, a memory of 0 pages (maximum 0) is added for that memory.grow.
// No existing index moves: globals, the memory, exports are appended. Every section but the
// memory (only if it had none), global, export and code sections is copied byte for byte,
// except DWARF (".debug_*") custom sections, which are dropped because the code offsets they
// describe have moved. The checks and the splitting of loops are described in checks.go.
//
// ok is false, with a nil error, when Instrument does not know the module well enough to
// rewrite it safely: an opcode or encoding it does not decode exactly as wazero does, a
// malformed section, a start function (it runs during instantiation, before Stop can reach the
// module), an export named StopGlobal, BudgetGlobal or StackGlobal, a function that returns
// several values and takes parameters with no type returning them without (its wrapper block
// needs one), or an output over 2*len(wasm)+Slack bytes. The caller then runs wasm as it is,
// under wazero's own interruption. Explain says why.
//
// err is non-nil only if the output failed Instrument's own re-reading of it (ErrSelfCheck): a
// bug here; the caller falls back the same way.
func Instrument(wasm []byte) (out []byte, ok bool, err error) {
	out, q, rerr := instrument(wasm, nil)
	if rerr != nil {
		return nil, false, nil
	}
	if err := selfCheck(out, q); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrSelfCheck, refusal(err))
	}
	return out, true, nil
}

// InstrumentShipped instruments a module Skillbox ships (an interpreter), which must be: its
// run is charged for the stack bound (StackCharge), so a module Instrument refuses is a bug in
// this package or the interpreter's build, reported as an error rather than run unbounded.
//
// frames, if not nil, are the weights: the stack each defined function's call takes, in the
// order of the code section, as wazero's compiler sized it (see package wazevoframes) for the
// module instrumented; they replace the estimates (frameWeight), which are safe for no module
// in particular. A table for another module (another function count) is refused. guards bound
// the globals they name (see Guard).
func InstrumentShipped(wasm []byte, frames []uint32, guards ...Guard) ([]byte, error) {
	out, q, err := instrument(wasm, frames, guards...)
	if err != nil {
		return nil, refusal(err)
	}
	if err := selfCheck(out, q); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSelfCheck, refusal(err))
	}
	return out, nil
}

// InstrumentWithTable is InstrumentShipped with the frames of table, a package wazevoframes
// table made for wasm (one made for another module is refused: wazevoframes.ErrStale).
func InstrumentWithTable(wasm, table []byte, guards ...Guard) ([]byte, error) {
	frames, err := wazevoframes.Decode(table, wasm)
	if err != nil {
		return nil, err
	}
	return InstrumentShipped(wasm, frames, guards...)
}

// Explain returns why Instrument refuses wasm (a *RefusalError), or nil if it instruments it.
func Explain(wasm []byte) error {
	_, _, err := instrument(wasm, nil)
	return refusal(err)
}

// Stop makes an instrumented module trap at its next yield: it sets StopGlobal to 1, then
// BudgetGlobal to 0 so that the yield comes at the next function entry or loop iteration. Safe
// to call from any goroutine while the guest runs. (A guest iteration that read the budget just
// before may write it back; its yield then comes once that budget is spent, Budget code bytes
// at most.) It fails if mod was not instrumented.
func Stop(mod api.Module) error {
	stop, ok1 := mod.ExportedGlobal(StopGlobal).(api.MutableGlobal)
	budget, ok2 := mod.ExportedGlobal(BudgetGlobal).(api.MutableGlobal)
	if !ok1 || !ok2 {
		return fmt.Errorf("module %q: %w", mod.Name(), ErrNotInstrumented)
	}
	stop.Set(1)
	budget.Set(0)
	return nil
}

// StopWhenDone stops mod (Stop) when ctx ends, and returns the function that lets go of that:
// call it once mod's call has returned; it reports false if the stop was made, or is being
// made. A ctx done already stops mod here, before its first instruction: a context.AfterFunc's
// goroutine might run only after a short call had finished, and one goroutine alone sets the
// stop (two setting the globals at once is a race).
func StopWhenDone(ctx context.Context, mod api.Module) (release func() bool) {
	if ctx.Err() != nil {
		_ = Stop(mod)
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, func() { _ = Stop(mod) })
}

// Section ids, as in the binary format.
const (
	secCustom   byte = 0
	secType     byte = 1
	secImport   byte = 2
	secFunction byte = 3
	secMemory   byte = 5
	secGlobal   byte = 6
	secExport   byte = 7
	secStart    byte = 8
	secCode     byte = 10
)

// order is a section's place in the module (wazero's checkSectionOrder): the tag section between
// memory and global, data count between element and code. Custom sections go anywhere.
var order = [14]int{1: 10, 2: 20, 3: 30, 4: 40, 5: 50, 13: 55, 6: 60, 7: 70, 8: 80, 9: 90, 12: 95, 10: 100, 11: 110}

type section struct {
	id                  byte
	start, content, end int // the id byte, the contents (after the size), the end
	drop                bool
}

// fnBody is where one function body is: its size, its locals, the instructions after them, its
// end, and its edits (w.edits[edits[0]:edits[1]]).
type fnBody struct {
	sizeAt, content, instr, end int
	edits                       [2]int
	counter                     int64 // the local its loops count in (counter.go), or -1
}

// walker holds the state of one walk of a module.
type walker struct {
	in     []byte
	verify bool // walking Instrument's own output: see selfCheck

	secs            []section
	importedGlobals uint32
	guestGlobals    uint32 // the globals guest code may name: those of the input
	memories        uint32 // imported and defined
	funcs           uint32
	memory          int // index in secs, or -1
	global, export  int
	code            int
	exported        [3]int    // verify mode: exports named StopGlobal, BudgetGlobal, StackGlobal
	exportedIndex   [3]uint32 // and their global indices
	types           []fnType
	funcTypes       []uint32 // the type of each function, imported ones first
	leaveEnd        int      // verify mode: where the last restore of the stack count ends
	frames          []uint32 // the weights of the defined functions, or nil for the estimates
	guards          []Guard

	// The body being walked (counter.go): its own locals (parameters included), the local its
	// loops count in or -1, whether it has loops and a try_table, and in verify mode where the
	// last charge of the counter ended.
	own            uint64
	counter        int64
	loops, catches bool
	chargeEnd      int

	seqs    seqs
	bodies  []fnBody
	edits   []edit
	stack   []frame
	scratch []byte
}

func newWalker(in []byte) *walker {
	return &walker{in: in, memory: -1, global: -1, export: -1, code: -1}
}

var magic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// instrument walks wasm and writes its instrumented copy.
func instrument(wasm []byte, frames []uint32, guards ...Guard) ([]byte, seqs, error) {
	w := newWalker(wasm)
	w.frames, w.guards = frames, guards
	if err := w.module(); err != nil {
		return nil, seqs{}, err
	}
	out, err := w.write()
	return out, w.seqs, err
}

// module walks the sections in order.
func (w *walker) module() error {
	if len(w.in) < len(magic) || !bytes.Equal(w.in[:len(magic)], magic) {
		return refuse(0, "not a wasm core module (magic and version 1)")
	}
	r := wasmbin.Reader{B: w.in, Pos: len(magic), End: len(w.in)}
	last := 0
	for r.Pos < r.End {
		start := r.Pos
		id := r.B[r.Pos]
		r.Pos++
		if int(id) >= len(order) || (id != secCustom && order[id] == 0) {
			return refuse(start, "unknown section id %d", id)
		}
		size, err := r.U32("section size")
		if err != nil {
			return err
		}
		if uint64(size) > uint64(r.Left()) {
			return refuse(start, "section %d of %d bytes overruns the module", id, size)
		}
		if id != secCustom {
			if order[id] <= last {
				return refuse(start, "section %d out of order", id)
			}
			last = order[id]
		}
		s := section{id: id, start: start, content: r.Pos, end: r.Pos + int(size)}
		if err := w.section(&s); err != nil {
			return wasmbin.Within(err, "section %d", id)
		}
		w.secs = append(w.secs, s)
		r.Pos = s.end
	}
	if w.code < 0 && w.funcs != 0 {
		return refuse(len(w.in), "%d functions and no code section", w.funcs)
	}
	if w.verify {
		want := [3]uint32{w.seqs.stop, w.seqs.budget, w.seqs.stack}
		if w.exported != [3]int{1, 1, 1} || w.exportedIndex != want || w.memories == 0 {
			return refuse(len(w.in), "exports %v of globals %v, %d memories", w.exported, w.exportedIndex, w.memories)
		}
	}
	return nil
}

func (w *walker) section(s *section) error {
	r := &wasmbin.Reader{B: w.in, Pos: s.content, End: s.end}
	var err error
	switch s.id {
	case secCustom:
		var name []byte
		if name, err = r.Bytes("custom section name"); err == nil {
			s.drop = !w.verify && strings.HasPrefix(string(name), ".debug_")
		}
		return err
	case secType:
		err = w.typeSection(r)
	case secImport:
		err = w.imports(r)
	case secFunction:
		err = w.functions(r)
	case secMemory:
		w.memory = len(w.secs)
		err = w.memorySection(r)
	case secGlobal:
		w.global = len(w.secs)
		err = w.globals(r)
	case secExport:
		w.export = len(w.secs)
		err = w.exports(r)
	case secStart:
		return refuse(s.start, "a start function: it runs while the module is instantiated, before Stop can reach it")
	case secCode:
		w.code = len(w.secs)
		err = w.codeSection(r)
	default:
		return nil // copied as it is
	}
	if err == nil && r.Pos != r.End {
		err = refuse(r.Pos, "%d bytes left at the end of the section", r.End-r.Pos)
	}
	return err
}

// imports counts the imported globals (they come first in the global index space) and
// memories.
func (w *walker) imports(r *wasmbin.Reader) error {
	n, err := r.Count("imports", 4)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if _, err := r.Bytes("import module"); err != nil {
			return err
		}
		if _, err := r.Bytes("import name"); err != nil {
			return err
		}
		kind, err := r.Byte("import kind")
		if err != nil {
			return err
		}
		switch kind {
		case 0x00:
			var t uint32
			t, err = r.U32("type index")
			w.funcTypes = append(w.funcTypes, t)
		case 0x01:
			err = tableType(r)
		case 0x02:
			w.memories++
			err = limits(r, "memory", 0x03)
		case 0x03:
			w.importedGlobals++
			err = r.GlobalType()
		case 0x04:
			err = r.TagType()
		default:
			err = refuse(r.Pos-1, "import kind 0x%02x", kind)
		}
		if err != nil {
			return wasmbin.Within(err, "import %d", i)
		}
	}
	w.guestGlobals = w.importedGlobals
	return nil
}

func (w *walker) functions(r *wasmbin.Reader) error {
	n, err := r.Count("functions", 1)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		t, err := r.U32("type index")
		if err != nil {
			return err
		}
		w.funcTypes = append(w.funcTypes, t)
	}
	w.funcs = n
	return nil
}

func (w *walker) memorySection(r *wasmbin.Reader) error {
	n, err := r.Count("memories", 2)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := limits(r, "memory", 0x03); err != nil {
			return err
		}
	}
	w.memories += n
	return nil
}

func (w *walker) globals(r *wasmbin.Reader) error {
	n, err := r.Count("globals", 3)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := r.GlobalType(); err != nil {
			return err
		}
		if err := r.ConstExpr(); err != nil {
			return wasmbin.Within(err, "global %d", i)
		}
	}
	total := uint64(w.importedGlobals) + uint64(n)
	if total >= 1<<32-2 {
		return refuse(r.Pos, "%d globals", total)
	}
	w.guestGlobals = uint32(total)
	if w.verify { // the last three globals are $stop, $budget and $stack, and guest code may name none
		if n < 3 || !bytes.HasSuffix(w.in[:r.Pos], addedGlobals) {
			return refuse(r.Pos, "the last globals are not the stop flag, the budget and the stack count")
		}
		w.guestGlobals -= 3
	}
	return nil
}

func (w *walker) exports(r *wasmbin.Reader) error {
	n, err := r.Count("exports", 3)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		name, err := r.Bytes("export name")
		if err != nil {
			return err
		}
		kind, err := r.Byte("export kind")
		if err != nil {
			return err
		}
		if kind > 0x04 {
			return refuse(r.Pos-1, "export kind 0x%02x", kind)
		}
		at := r.Pos
		idx, err := r.U32("export index")
		if err != nil {
			return err
		}
		if k := slices.Index([]string{StopGlobal, BudgetGlobal, StackGlobal}, string(name)); k >= 0 {
			if !w.verify {
				return refuse(at, "the module already exports %s", name)
			}
			if kind != 0x03 {
				return refuse(at, "%s is not a global", name)
			}
			w.exported[k]++
			w.exportedIndex[k] = idx
			continue
		}
		if kind == 0x03 && idx >= w.guestGlobals {
			// The same reason as for global.get: the index would come to name $stop or $budget.
			return refuse(at, "export of global %d: the module has %d globals", idx, w.guestGlobals)
		}
	}
	return nil
}

// codeSection reads every body: one for each function the function section declared.
func (w *walker) codeSection(r *wasmbin.Reader) error {
	at := r.Pos
	n, err := r.Count("function bodies", 3)
	if err != nil {
		return err
	}
	if n != w.funcs {
		return refuse(at, "%d bodies for %d functions", n, w.funcs)
	}
	if w.frames != nil && uint64(len(w.frames)) != uint64(n) {
		return refuse(at, "a table of %d frames for %d functions: made for another module", len(w.frames), n)
	}
	if !w.verify {
		w.seqs = newSeqs(w.guestGlobals, w.guestGlobals+1, w.guestGlobals+2)
		if err := w.seqs.withGuards(w.guards, w.guestGlobals); err != nil {
			return err
		}
	}
	w.bodies = make([]fnBody, 0, n)
	grown := 0 // what the edits add so far: the walk stops as soon as that is over the bound
	for i := uint32(0); i < n; i++ {
		sizeAt := r.Pos
		size, err := r.U32("body size")
		if err != nil {
			return wasmbin.Within(err, "body %d", i)
		}
		if uint64(size) > uint64(r.Left()) {
			return refuse(sizeAt, "body %d of %d bytes overruns the section", i, size)
		}
		br := wasmbin.Reader{B: w.in, Pos: r.Pos, End: r.Pos + int(size)}
		first := len(w.edits)
		instr, err := w.body(&br, i, w.funcTypes[len(w.funcTypes)-int(n)+int(i)])
		if err != nil {
			return wasmbin.Within(err, "body %d", i)
		}
		b := fnBody{sizeAt: sizeAt, content: r.Pos, instr: instr, end: br.End, edits: [2]int{first, len(w.edits)}, counter: w.counter}
		w.bodies = append(w.bodies, b)
		if grown += w.growth(b); !w.verify && grown > len(w.in)+Slack {
			return refuse(sizeAt, "the checks would more than double the module")
		}
		r.Pos = br.End
	}
	return nil
}

// The entries of the appended globals: mutable i32, i32.const 0 for $stop, Budget for $budget,
// StackBytes for $stack.
var addedGlobals = func() []byte {
	b := []byte{0x7f, 0x01, 0x41, 0x00, 0x0b}
	b = append(appendS32(append(b, 0x7f, 0x01, 0x41), Budget), 0x0b)
	return append(appendS32(append(b, 0x7f, 0x01, 0x41), StackBytes), 0x0b)
}()

// tableType reads a table type, with the 0x40 0x00 prefix and initializer wazero's decodeTable
// takes. Tables are only stepped over: nothing here depends on them.
func tableType(r *wasmbin.Reader) error {
	hasInit := r.Pos < r.End && r.B[r.Pos] == 0x40
	if hasInit {
		r.Pos++
		if err := r.Zero("table prefix"); err != nil {
			return err
		}
	}
	b, err := r.Byte("table element type")
	if err != nil {
		return err
	}
	switch b {
	case 0x70, 0x6f, 0x69:
	case 0x63, 0x64:
		if _, err := r.S33("table heap type"); err != nil {
			return err
		}
	default:
		return refuse(r.Pos-1, "table element type 0x%02x", b)
	}
	if err := limits(r, "table", 0x01); err != nil {
		return err
	}
	if hasInit {
		return r.ConstExpr()
	}
	return nil
}

// limits reads a flag (at most maxFlag: bit 0 a maximum, bit 1 shared) and the u32 minimum and
// maximum. 64-bit memories and tables are refused: wazero has neither.
func limits(r *wasmbin.Reader, what string, maxFlag byte) error {
	flag, err := r.Byte(what + " limits")
	if err != nil {
		return err
	}
	if flag > maxFlag {
		return refuse(r.Pos-1, "%s limits flag 0x%02x", what, flag)
	}
	if _, err := r.U32(what + " minimum"); err != nil {
		return err
	}
	if flag&1 != 0 {
		_, err = r.U32(what + " maximum")
	}
	return err
}
