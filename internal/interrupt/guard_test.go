package interrupt

import (
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// guarded instantiates testdata/cstack.wasm instrumented with guards.
func guarded(t *testing.T, guards ...Guard) api.Module {
	t.Helper()
	ctx := context.Background()
	out, err := InstrumentShipped(readFile(t, "testdata/cstack.wasm"), nil, guards...)
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntimeWith(t, false, api.CoreFeaturesV2)
	cm, err := r.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// A guarded C stack traps as a stack overflow before it writes over the data below it; the
// same module unguarded runs through that data and returns as if nothing happened.
func TestGuardStopsTheCStackAtItsEnd(t *testing.T) {
	ctx := context.Background()
	call := func(m api.Module, fn string, args ...uint64) (int32, error) {
		res, err := m.ExportedFunction(fn).Call(ctx, args...)
		if err != nil {
			return 0, StackOverflow(m, err)
		}
		return api.DecodeI32(res[0]), nil
	}
	plain := guarded(t)
	if _, err := call(plain, "down", 30); err != nil { // 31 frames: to 8192-31*256 = 256
		t.Fatal(err)
	}
	if d, _ := call(plain, "data"); d == 42 {
		t.Fatal("the unguarded stack left the data alone: the test shows nothing")
	}

	m := guarded(t, Guard{Global: 0, Min: 4096})
	if n, err := call(m, "down", 15); err != nil || n != 15 { // 16 frames: to 4096, the bound
		t.Fatalf("down(15) = %d, %v: within the stack, it must run", n, err)
	}
	_, err := call(m, "down", 30)
	if !errors.Is(err, ErrCStackOverflow) || errors.Is(err, ErrStackOverflow) {
		t.Fatalf("down(30) err = %v, want ErrCStackOverflow alone", err)
	}
	if d, _ := call(m, "data"); d != 42 {
		t.Fatalf("the data below the stack is %d, want 42: the stack ran over it", d)
	}
}

// Each global.set of a guarded global is followed by its check, which the self-check requires;
// a guard on a global the module does not have is refused.
func TestGuardIsChecked(t *testing.T) {
	wasm := readFile(t, "testdata/cstack.wasm")
	out, q, err := instrument(wasm, nil, Guard{Global: 0, Min: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if err := selfCheck(out, q); err != nil {
		t.Fatal(err)
	}
	unguarded, _, err := instrument(wasm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := selfCheck(unguarded, q); err == nil {
		t.Fatal("the self-check took a module without the guard's checks")
	}
	if _, err := InstrumentShipped(wasm, nil, Guard{Global: 1, Min: 0}); err == nil {
		t.Fatal("a guard on global 1 of a module with one global was taken")
	}
}
