package interrupt

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
	"github.com/tetratelabs/wazero/api"
)

// The wasm call stack's bound. wazero keeps a guest's call stack in a Go byte slice outside the
// run's memory limit; it grows by doubling while the guest recurses and stops only at about
// 50 MB, where the copy holds ~150 MB at once. Instrument bounds it: a third global, $stack,
// starts at StackBytes, every function entry takes the function's frame estimate (its weight)
// from it and traps once it is below zero, and every way out of the function gives the weight
// back:
//
//	global.get $stack  i32.const W  i32.sub  global.set $stack   ;; after the budget count
//	global.get $stack  i32.const 0  i32.lt_s  if unreachable end
//	block (the function's results)                                ;; the wrapper
//	  ...body: a branch to the function's label now ends the wrapper...
//	end
//	global.get $stack  i32.const W  i32.add  global.set $stack
//	end
//
// and the same restore before every `return`, `return_call`, `return_call_indirect` and
// `return_call_ref`, which leave the function without reaching the wrapper's end. The wrapper
// keeps every label as it was: it is the outermost block inside the function, so a label that
// named the function names it now. An exception thrown out of a function skips its restore: the
// count then stays lower than the stack for the rest of the instance's life, which only ever
// stops a guest early (every run has an instance of its own).
//
// The weight is what wazero's compiler (wazevo) puts on its stack for one call of the function:
// the return address, saved registers, the spill slots of its values, the stack slots of the
// arguments and results of the calls it makes. Only the compiled code says it exactly. For the
// interpreters Skillbox ships, it is a table of the measured frames (InstrumentShipped; package
// wazevoframes makes and checks the tables), and the count is a bound on the stack's bytes. For
// any other module it is an estimate ([frameWeight]): a bound on the depth, which a module made
// to defeat the estimate can exceed in bytes, so such a run is charged the stack wazero's own
// bound allows (runtime/internal/engine's StackReserve).

// StackGlobal is the export name of the stack count: a mutable i32, the bytes of wasm call stack
// the guest has left. It is below zero after the guest trapped on it (see Overflowed).
const StackGlobal = "__skillbox_stack"

// StackBytes is the wasm call stack a guest may use, as the weights count it: the stack wazero
// allocates for it then stays within twice this (it grows by doubling), and three times while
// it grows (the old stack is copied into the new). Measured with the interpreters: Python's own
// recursion limit (600) comes first for Python code; json.dumps of a list nested 3,000 deep
// fits, 6,000 does not (a RecursionError); QuickJS's C stack in linear memory (its Guard) ends
// first, at about 138 nested JavaScript calls.
const StackBytes = 2 << 20

// StackCharge is the most an instrumented guest's wasm call stack holds of the host's memory:
// the largest stack wazero grows for StackBytes of frames, and the one it copies from.
const StackCharge = 3*StackBytes + 64<<10

// ErrStackOverflow is what a run that trapped on its stack count failed with.
var ErrStackOverflow = fmt.Errorf("stack overflow: the guest's calls nest deeper than its %d MiB of wasm call stack", StackBytes>>20)

// Overflowed reports whether mod, instrumented, trapped because its calls used up the stack:
// its stack count is below zero.
func Overflowed(mod api.Module) bool {
	g, ok := mod.ExportedGlobal(StackGlobal).(api.MutableGlobal)
	return ok && int32(uint32(g.Get())) < 0
}

// StackOverflow returns err joined with ErrStackOverflow if mod trapped on its stack count, or
// with ErrCStackOverflow if it trapped on a Guard, else err as it is.
func StackOverflow(mod api.Module, err error) error {
	if err == nil || mod == nil || !Overflowed(mod) {
		return err
	}
	if g, _ := mod.ExportedGlobal(StackGlobal).(api.MutableGlobal); int32(uint32(g.Get())) == guardTrapped {
		return errors.Join(ErrCStackOverflow, err)
	}
	return errors.Join(ErrStackOverflow, err)
}

// frameWeight estimates the bytes of wazero's stack one call of a function takes: a base for
// the return address, the caller's frame pointer, the callee-saved registers it pushes and the
// stack check; 16 bytes for each parameter and local and for each argument and result of the
// widest call it makes (passed on the stack past the registers); and a quarter of its code's
// bytes for the spill slots of the values its code makes. Measured against wazevo's own frames
// (package wazevoframes): at least the frame of every function of CPython (8,170) and QuickJS
// (1,601), 3.2-3.5 times it on average; but up to 2.8 times under it for a few functions of
// Go-compiled guests (Go's code keeps about a byte of frame for each byte of code), and a
// module written to keep many values across its calls can beat any such estimate. It is capped
// past StackBytes: a function over it traps at its first call.
func frameWeight(params, locals, widestCall uint64, code int) int32 {
	w := 256 + 16*(params+locals+widestCall) + uint64(code)/4
	return int32(min(w, StackBytes+1))
}

// fnType is one function type: its parameter count and its results as encoded.
type fnType struct {
	params  uint32
	results []byte // the value types, as they are in the type section
	nres    uint32
}

// typeSection reads the function types. Any other kind of type (the GC proposal's) is refused:
// wazero v1.12 decodes none.
func (w *walker) typeSection(r *wasmbin.Reader) error {
	n, err := r.Count("types", 3)
	if err != nil {
		return err
	}
	w.types = make([]fnType, 0, n)
	for i := uint32(0); i < n; i++ {
		form, err := r.Byte("type form")
		if err != nil {
			return err
		}
		if form != 0x60 {
			return refuse(r.Pos-1, "type %d is not a function type (0x%02x)", i, form)
		}
		var t fnType
		if t.params, err = valTypes(r, "parameters"); err != nil {
			return wasmbin.Within(err, "type %d", i)
		}
		start := r.Pos
		if t.nres, err = valTypes(r, "results"); err != nil {
			return wasmbin.Within(err, "type %d", i)
		}
		t.results = r.B[start:r.Pos]
		w.types = append(w.types, t)
	}
	return nil
}

// valTypes reads a vector of value types and returns its length.
func valTypes(r *wasmbin.Reader, what string) (uint32, error) {
	n, err := r.Count(what, 1)
	if err != nil {
		return 0, err
	}
	for i := uint32(0); i < n; i++ {
		if err := r.ValType(what); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// funcType is the type of function idx (imported or defined), or an error if there is none.
func (w *walker) funcType(at int, idx uint32) (*fnType, error) {
	if uint64(idx) >= uint64(len(w.funcTypes)) {
		return nil, refuse(at, "function %d: the module has %d", idx, len(w.funcTypes))
	}
	return w.typeAt(at, w.funcTypes[idx])
}

func (w *walker) typeAt(at int, idx uint32) (*fnType, error) {
	if uint64(idx) >= uint64(len(w.types)) {
		return nil, refuse(at, "type %d: the module has %d", idx, len(w.types))
	}
	return &w.types[idx], nil
}

// wrapperType is the block type of a function's wrapper: no parameters, the function's results.
// Several results need a type index: the function's own type if it takes no parameters, else
// another type of the module with none and the same results; a module without one is refused.
func (w *walker) wrapperType(at int, typeIdx uint32) ([]byte, error) {
	t, err := w.typeAt(at, typeIdx)
	if err != nil {
		return nil, err
	}
	switch {
	case t.nres == 0:
		return []byte{0x40}, nil
	case t.nres == 1:
		return t.results[1:], nil // after the count, a one-byte u32
	case t.params == 0:
		return appendS33(nil, int64(typeIdx)), nil
	}
	for i, u := range w.types {
		if u.params == 0 && bytes.Equal(u.results, t.results) {
			return appendS33(nil, int64(i)), nil
		}
	}
	return nil, refuse(at, "a function of type %d returns %d values and no type returns them without parameters", typeIdx, t.nres)
}

// appendS33 appends a non-negative block type index as an s33.
func appendS33(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// callArity is the width (parameters and results) of the call at `at`, for op and its first
// immediate idx: a function index for call and return_call, a type index for the others.
func (w *walker) callArity(at int, op byte, idx uint32) (uint64, error) {
	var t *fnType
	var err error
	if op == 0x10 || op == 0x12 {
		t, err = w.funcType(at, idx)
	} else {
		t, err = w.typeAt(at, idx)
	}
	if err != nil {
		return 0, err
	}
	return uint64(t.params) + uint64(t.nres), nil
}

// isReturn reports whether op leaves the function without reaching its end: return and the tail
// calls.
func isReturn(op byte) bool {
	return op == 0x0f || op == 0x12 || op == 0x13 || op == 0x15
}

// appendEnter appends the stack count at entry (weight w), its check, and the wrapper's block.
func (q *seqs) appendEnter(b []byte, w int32, bt []byte) []byte {
	b = wasmbin.AppendU32(append(b, 0x23), q.stack)
	b = appendS32(append(b, 0x41), w)
	b = wasmbin.AppendU32(append(b, 0x6b, 0x24), q.stack)
	b = wasmbin.AppendU32(append(b, 0x23), q.stack)
	b = append(b, 0x41, 0x00, 0x48, 0x04, 0x40, 0x00, 0x0b) // i32.const 0, i32.lt_s, if unreachable end
	return append(append(b, 0x02), bt...)
}

// appendLeave appends the restore of weight w.
func (q *seqs) appendLeave(b []byte, w int32) []byte {
	b = wasmbin.AppendU32(append(b, 0x23), q.stack)
	b = appendS32(append(b, 0x41), w)
	return wasmbin.AppendU32(append(b, 0x6a, 0x24), q.stack)
}

// matchEnter, in verify mode, steps over the entry's stack count and check, and the wrapper's
// block of type bt.
func (q *seqs) matchEnter(r *wasmbin.Reader, bt []byte) error {
	if err := q.matchWeighted(r, 0x6b); err != nil {
		return err
	}
	check := wasmbin.AppendU32([]byte{0x23}, q.stack)
	check = append(check, 0x41, 0x00, 0x48, 0x04, 0x40, 0x00, 0x0b, 0x02)
	if err := expect(r, check); err != nil {
		return err
	}
	return expect(r, bt)
}

// matchLeave, in verify mode, steps over a restore.
func (q *seqs) matchLeave(r *wasmbin.Reader) error { return q.matchWeighted(r, 0x6a) }

// matchWeighted steps over global.get $stack, i32.const (any), op, global.set $stack.
func (q *seqs) matchWeighted(r *wasmbin.Reader, op byte) error {
	get := wasmbin.AppendU32([]byte{0x23}, q.stack)
	if err := expect(r, append(get, 0x41)); err != nil {
		return err
	}
	if err := r.S32("weight"); err != nil {
		return err
	}
	return expect(r, wasmbin.AppendU32([]byte{op, 0x24}, q.stack))
}
