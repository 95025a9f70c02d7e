package interrupt

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// stackModule instantiates testdata/stack.wasm, instrumented, with tail calls on.
func stackModule(t *testing.T) api.Module {
	t.Helper()
	ctx := context.Background()
	r := newRuntimeWith(t, false, api.CoreFeaturesV2|experimental.CoreFeaturesTailCall)
	compiled, err := r.CompileModule(ctx, mustInstrument(t, readFile(t, "testdata/stack.wasm")))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig())
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// TestStackCountComesBack: every way out of a function gives back what its entry took — the
// count is StackBytes again after each call, whichever way each function left.
func TestStackCountComesBack(t *testing.T) {
	mod := stackModule(t)
	count := mod.ExportedGlobal(StackGlobal)
	for _, c := range []struct {
		fn   string
		arg  int32
		want int32
	}{
		{"exits", 0, 10},     // br_if to the function's label
		{"exits", 1, 40},     // br_table to a block, then br to the function's label from an if
		{"exits", 2, 30},     // return from a block
		{"exits", 3, 50},     // falls off the end
		{"exits", 9, 20},     // br_table's default: the function's label
		{"deep", 500, 500},   // 500 nested calls
		{"indirect", 40, 40}, // call_indirect
		{"tail", 1e6, 7},     // a million tail calls: the count stays flat
		{"two", 0, -97},      // two results, a return with two values
		{"two", 5, 98},
	} {
		res, err := mod.ExportedFunction(c.fn).Call(context.Background(), api.EncodeI32(c.arg))
		if err != nil {
			t.Fatalf("%s(%d): %v", c.fn, c.arg, err)
		}
		if got := api.DecodeI32(res[0]); got != c.want {
			t.Errorf("%s(%d) = %d, want %d", c.fn, c.arg, got, c.want)
		}
		if got := int32(uint32(count.Get())); got != StackBytes {
			t.Fatalf("after %s(%d) the stack count is %d, want %d", c.fn, c.arg, got, StackBytes)
		}
	}
}

// TestStackOverflowTraps: recursion deeper than the count allows traps, and Overflowed says
// why; the depth reached is what the weights allow, far less than wazero's own bound.
func TestStackOverflowTraps(t *testing.T) {
	mod := stackModule(t)
	_, err := mod.ExportedFunction("deep").Call(context.Background(), api.EncodeI32(1e7))
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("deep(1e7): %v, want the stack count's trap", err)
	}
	if !Overflowed(mod) {
		t.Fatal("Overflowed is false after the stack count's trap")
	}
	if err := StackOverflow(mod, err); !errors.Is(err, ErrStackOverflow) {
		t.Fatalf("StackOverflow: %v", err)
	}
	// A module that trapped otherwise did not overflow.
	other := stackModule(t)
	if _, err := other.ExportedFunction("deep").Call(context.Background(), api.EncodeI32(3)); err != nil {
		t.Fatal(err)
	}
	if Overflowed(other) || StackOverflow(other, errors.New("x")).Error() != "x" {
		t.Fatal("a module that did not overflow is said to have")
	}
}

// TestSeveralResultsNeedAType: a function with parameters and two results needs a type that
// returns them without parameters, for its wrapper block; without one the module is refused.
func TestSeveralResultsNeedAType(t *testing.T) {
	// (module (func (param i32) (result i32 i32) local.get 0 local.get 0))
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 7, 1, 0x60, 1, 0x7f, 2, 0x7f, 0x7f, // type section: (i32) -> (i32 i32)
		3, 2, 1, 0, // function section
		10, 8, 1, 6, 0, 0x20, 0, 0x20, 0, 0x0b, // code section
	}
	if _, ok, err := Instrument(wasm); ok || err != nil {
		t.Fatalf("Instrument: ok=%v err=%v, want a refusal", ok, err)
	}
	if err := Explain(wasm); err == nil || !strings.Contains(err.Error(), "returns 2 values") {
		t.Fatalf("Explain: %v", err)
	}
}

// TestShippedWeightsAreTheBound: with a frame table, each call is charged its entry, so the
// depth the count allows is exact: with every weight StackBytes/100, 100 nested calls fit and
// the 101st traps.
func TestShippedWeightsAreTheBound(t *testing.T) {
	wasm := readFile(t, "testdata/stack.wasm")
	ctx := context.Background()
	frames := make([]uint32, 7) // the module's functions
	for i := range frames {
		frames[i] = StackBytes / 100
	}
	out, err := InstrumentShipped(wasm, frames)
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntimeWith(t, false, api.CoreFeaturesV2|experimental.CoreFeaturesTailCall)
	compiled, err := r.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	call := func(n int32) error {
		mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		defer mod.Close(ctx)
		_, err = mod.ExportedFunction("deep").Call(ctx, api.EncodeI32(n))
		return StackOverflow(mod, err)
	}
	if err := call(99); err != nil { // deep(99) nests 100 calls
		t.Fatalf("100 calls of StackBytes/100: %v", err)
	}
	if err := call(100); !errors.Is(err, ErrStackOverflow) {
		t.Fatalf("101 calls of StackBytes/100: %v, want ErrStackOverflow", err)
	}

	if _, err := InstrumentShipped(wasm, frames[:1]); err == nil || !strings.Contains(err.Error(), "made for another module") {
		t.Fatalf("a table for another module: %v", err)
	}
}
