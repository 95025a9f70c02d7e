package interrupt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// calls are the calls TestSameBehaviour makes of a module: every exported function that takes
// no parameter, and these with parameters.
var calls = map[string][][]any{
	"twice.wasm":    {{"execute", 12}},
	"simd.wasm":     {{"execute", 100}, {"execute", 1}},
	"control.wasm":  {{"table", 5}, {"table", 17}, {"table", 0}, {"params", 10}, {"carry", 12}, {"pair", 3}, {"pair", 60}},
	"tailcall.wasm": {{"down", 1000}},
	"counted.wasm":  {{"falls", 5}, {"returns", 5}, {"tail", 5}, {"branches", 5}},
	"stack.wasm":    {{"exits", 0}, {"exits", 1}, {"exits", 2}, {"exits", 3}, {"exits", 9}, {"deep", 100}, {"indirect", 5}, {"tail", 1000}, {"two", 0}, {"two", 5}},
}

// skipped never return: the stop tests run them.
// startloop.wasm is a fallback (see fallbacks) that never returns either.
var skipped = map[string]bool{"loop.wasm": true, "startloop.wasm": true}

// TestSameBehaviour: each WAT fixture, instrumented and never stopped, does what it does as it
// is: the same results or trap, the same host calls with the same arguments, the same memory.
func TestSameBehaviour(t *testing.T) {
	files, err := filepath.Glob("../../testdata/wasm/*.wasm")
	if err != nil {
		t.Fatal(err)
	}
	local, _ := filepath.Glob("testdata/*.wasm")
	for _, path := range append(files, local...) {
		name := filepath.Base(path)
		if skipped[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// As Skillbox loads a module: bounded (tables given a maximum) by wasmcheck first.
			_, in, err := wasmcheck.Check(readFile(t, path), wasmcheck.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			out := mustInstrument(t, in)
			for _, c := range callsOf(t, name, in) {
				want := observe(t, in, c)
				got := observe(t, out, c)
				if want != got {
					t.Errorf("%v:\n as it is:    %s\n instrumented: %s", c, want, got)
				}
			}
		})
	}
}

func callsOf(t *testing.T, name string, wasm []byte) [][]any {
	if c, ok := calls[name]; ok {
		return c
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	compiled, err := r.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	var cs [][]any
	for fn, def := range compiled.ExportedFunctions() {
		if len(def.ParamTypes()) == 0 {
			cs = append(cs, []any{fn})
		}
	}
	return cs
}

// observe runs one call (a function name, then i32 parameters) on a fresh instance of wasm with
// stand-in imports, and describes what happened: results or error, host calls, memory. It runs
// with wazero's own interruption and a generous deadline only so that a bug cannot hang the
// test; nothing here depends on time.
func observe(t *testing.T, wasm []byte, c []any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true).
		WithMemoryLimitPages(256).WithCoreFeatures(api.CoreFeaturesV2|experimental.CoreFeaturesTailCall))
	defer r.Close(ctx)
	compiled, err := r.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	h := &host{input: []byte(`{"case":"1","n":1000}`), budget: 10000}
	h.link(t, r, compiled)
	mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig())
	if err != nil {
		return "instantiate: " + firstLine(err)
	}
	params := make([]uint64, 0, len(c)-1)
	for _, p := range c[1:] {
		params = append(params, api.EncodeI32(int32(p.(int))))
	}
	results, err := mod.ExportedFunction(c[0].(string)).Call(ctx, params...)
	var b strings.Builder
	if errors.Is(StackOverflow(mod, err), ErrStackOverflow) {
		err = errors.New("stack overflow") // the bound Instrument sets, where wazero's own is far deeper
	}
	if err != nil {
		fmt.Fprintf(&b, "error %q", firstLine(err))
	} else {
		fmt.Fprintf(&b, "results %v", results)
	}
	fmt.Fprintf(&b, ", %d host calls", len(h.calls))
	for _, c := range h.calls {
		fmt.Fprintf(&b, " %s(%x)", c.name, c.params)
	}
	var mem []byte
	if m := mod.Memory(); m != nil && !reflect.ValueOf(m).IsNil() { // a nil *MemoryInstance if none
		mem, _ = m.Read(0, m.Size())
	}
	fmt.Fprintf(&b, ", memory of %d bytes, %d not zero", len(mem), len(mem)-bytes.Count(mem, []byte{0}))
	if len(mem) > 0 {
		fmt.Fprintf(&b, ", sum %x", checksum(mem))
	}
	return b.String()
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func checksum(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// Entering a loop yields only when the budget is spent: a guest that enters an inner loop 100
// times with budget to spare spends it, rather than refilling it (and leaving to Go) at each
// entry, which made code that enters short loops often up to twice as slow.
func TestEnteringALoopDoesNotYield(t *testing.T) {
	ctx := context.Background()
	r := newRuntimeWith(t, false, api.CoreFeaturesV2)
	cm, err := r.CompileModule(ctx, mustInstrument(t, readFile(t, "testdata/inner.wasm")))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	budget := mod.ExportedGlobal(BudgetGlobal).(api.MutableGlobal)
	budget.Set(100_000)
	if _, err := mod.ExportedFunction("inner").Call(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if left := int32(uint32(budget.Get())); left >= 100_000 || left <= 0 {
		t.Fatalf("budget after 100 entries into a loop = %d, want less than the 100000 it had and more than 0: no yield", left)
	}
}
