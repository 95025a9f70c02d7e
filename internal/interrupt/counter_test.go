package interrupt

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// TestEveryWayOutChargesTheLoops: a function that counts its loops in a local charges them to
// the budget on every way out: falling off its end, a return, a tail call and a branch to its
// own label. Run with 1 and with 101 iterations from the same budget, the second must use 100
// iterations' weight more; without the charge, both use the entry's weight alone.
func TestEveryWayOutChargesTheLoops(t *testing.T) {
	ctx := context.Background()
	r := newRuntimeWith(t, false, api.CoreFeaturesV2|experimental.CoreFeaturesTailCall)
	cm, err := r.CompileModule(ctx, mustInstrument(t, readFile(t, "testdata/counted.wasm")))
	if err != nil {
		t.Fatal(err)
	}
	used := func(fn string, n int32) int32 {
		mod, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		defer mod.Close(ctx)
		budget := mod.ExportedGlobal(BudgetGlobal).(api.MutableGlobal)
		if _, err := mod.ExportedFunction(fn).Call(ctx, api.EncodeI32(n)); err != nil {
			t.Fatalf("%s(%d): %v", fn, n, err)
		}
		return Budget - int32(uint32(budget.Get()))
	}
	for _, fn := range []string{"falls", "returns", "tail", "branches"} {
		one, more := used(fn, 1), used(fn, 101)
		if d := more - one; d <= 0 || d%100 != 0 {
			t.Errorf("%s: 1 iteration used %d of the budget, 101 used %d: want 100 iterations' weight more", fn, one, more)
		}
	}
}

// TestALoopLargerThanACharge: a loop whose body alone weighs more than ChargeEvery runs its
// body. Its weight is bounded below ChargeEvery, else the count after each charge would branch
// back to the charge before the body ran, for ever (found on CPython's evaluation loop). The
// runtime has wazero's own interruption and a generous deadline only so that the bug cannot
// hang the test.
func TestALoopLargerThanACharge(t *testing.T) {
	nops := bytes.Repeat([]byte{0x01}, ChargeEvery+1000)
	// (param i32) (result i32): loop, the nops, n -= 1, br_if n > 0, end, n
	code := cat([]byte{0x03, 0x40}, nops,
		[]byte{0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x41, 0x00, 0x4a, 0x0d, 0x00, 0x0b, 0x20, 0x00, 0x0b})
	wasm := module(sec(1, vec([]byte{0x60, 0x01, 0x7f, 0x01, 0x7f})), oneFunc,
		sec(7, vec(cat(str("f"), []byte{0x00, 0x00}))), sec(10, vec(body(code...))))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mod, err := newRuntime(t, true).Instantiate(ctx, mustInstrument(t, wasm))
	if err != nil {
		t.Fatal(err)
	}
	res, err := mod.ExportedFunction("f").Call(ctx, 1000)
	if err != nil || int32(res[0]) != 0 {
		t.Fatalf("f(1000) = %v, %v: want 0, nil", res, err)
	}
}

// TestAFunctionThatCatchesCountsInTheGlobal: a function with a try_table keeps its loops'
// count in the budget itself: an exception thrown through it would skip the charge on its way
// out. Its body gets no local.
func TestAFunctionThatCatchesCountsInTheGlobal(t *testing.T) {
	loopIn := func(extra ...byte) []byte {
		return module(typeVoid, oneFunc, sec(10, vec(body(cat(extra, []byte{0x03, 0x40, 0x0b, 0x0b})...))))
	}
	plain := mustInstrument(t, loopIn())
	catches := mustInstrument(t, loopIn(0x1f, 0x40, 0x00, 0x0b)) // try_table, no catch clause, end
	for name, c := range map[string]struct {
		out  []byte
		want byte
	}{"a loop": {plain, 1}, "a loop and a try_table": {catches, 0}} {
		var decls uint32 = 0xff
		for _, s := range sections(t, c.out) {
			if s.id == secCode { // its size, the body count, the body's size, its local declarations
				r := wasmbin.Reader{B: s.bytes, Pos: 1, End: len(s.bytes)}
				for range 3 {
					if _, err := r.U32("u32"); err != nil {
						t.Fatal(err)
					}
				}
				decls, _ = r.U32("local declarations")
			}
		}
		if decls != uint32(c.want) {
			t.Errorf("%s: %d local declarations, want %d", name, decls, c.want)
		}
	}
}
