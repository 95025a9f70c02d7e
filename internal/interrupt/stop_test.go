package interrupt

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// running instantiates the instrumented wasm in r (wazero's own interruption off, as Skillbox
// runs instrumented modules), calls fn with params in a goroutine, and returns the module and
// the channel the call's error comes on. h, if not nil, stands in for its imports.
func running(t *testing.T, r wazero.Runtime, wasm []byte, h *host, fn string, params ...uint64) (api.Module, <-chan error) {
	t.Helper()
	ctx := context.Background()
	compiled, err := r.CompileModule(ctx, mustInstrument(t, wasm))
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		h = &host{}
	}
	h.link(t, r, compiled)
	mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction(fn).Call(ctx, params...)
		done <- err
	}()
	return mod, done
}

// awaitCounting returns once the guest has spent its budget at two different points: it is
// past its entry and running its loop (or its recursion). No clock: the guest's own counter.
func awaitCounting(t *testing.T, mod api.Module) {
	t.Helper()
	budget := mod.ExportedGlobal(BudgetGlobal)
	seen := map[uint64]bool{}
	for len(seen) < 3 {
		seen[budget.Get()] = true
		runtime.Gosched()
	}
}

// stopAndExpectTrap collects a garbage (its stop-the-world needs the guest's goroutine, which
// only the yields let go), stops the guest, and requires the call to end in the stop's trap.
func stopAndExpectTrap(t *testing.T, mod api.Module, done <-chan error) {
	t.Helper()
	runtime.GC()
	select {
	case err := <-done:
		t.Fatalf("the guest returned before it was stopped: %v", err)
	default:
	}
	if err := Stop(mod); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("stopped guest: %v, want the unreachable trap", err)
	}
}

// TestStopSpin stops spin.wasm, 10^15 iterations of a hash that calls no host function, under
// a garbage collection.
func TestStopSpin(t *testing.T) {
	h := &host{input: []byte(`{"n":1000000000000000}`), started: make(chan struct{})}
	mod, done := running(t, newRuntime(t, false), readFile(t, "../../testdata/wasm/spin.wasm"), h, "execute")
	<-h.started
	awaitCounting(t, mod)
	stopAndExpectTrap(t, mod, done)
}

// TestStopLoop stops loop.wasm, `loop br 0` and nothing else.
func TestStopLoop(t *testing.T) {
	mod, done := running(t, newRuntime(t, false), readFile(t, "../../testdata/wasm/loop.wasm"), nil, "execute")
	awaitCounting(t, mod)
	stopAndExpectTrap(t, mod, done)
}

// TestStopRecursion stops 2^60 calls that never loop: the function-entry check does.
func TestStopRecursion(t *testing.T) {
	mod, done := running(t, newRuntime(t, false), readFile(t, "testdata/twice.wasm"), nil, "execute", 60)
	awaitCounting(t, mod)
	stopAndExpectTrap(t, mod, done)
}

// TestStopTailCalls stops an endless chain of return_call, with wazero's tail calls enabled.
func TestStopTailCalls(t *testing.T) {
	r := newRuntimeWith(t, false, api.CoreFeaturesV2|experimental.CoreFeaturesTailCall)
	mod, done := running(t, r, readFile(t, "testdata/tailcall.wasm"), nil, "down", api.EncodeI32(-1))
	awaitCounting(t, mod)
	stopAndExpectTrap(t, mod, done)
}

// TestStopNotInstrumented: Stop of a module Instrument did not rewrite fails.
func TestStopNotInstrumented(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, false)
	mod, err := r.Instantiate(ctx, readFile(t, "testdata/twice.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Stop(mod); err == nil {
		t.Fatal("Stop of a module without the stop flag succeeded")
	}
}

// TestStopMoreGuestsThanPs: with more spinning guests than Ps, the goroutine that stops them
// still runs (each guest's yields let the scheduler take its P back), and so does a garbage
// collection.
func TestStopMoreGuestsThanPs(t *testing.T) {
	r := newRuntime(t, false)
	loop := readFile(t, "../../testdata/wasm/loop.wasm")
	n := runtime.GOMAXPROCS(0) + 1
	mods := make([]api.Module, n)
	dones := make([]<-chan error, n)
	for i := range mods {
		mods[i], dones[i] = running(t, r, loop, nil, "execute")
	}
	for i := range mods {
		awaitCounting(t, mods[i])
	}
	runtime.GC()
	for i := range mods {
		if err := Stop(mods[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range mods {
		if err := <-dones[i]; err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("guest %d: %v", i, err)
		}
	}
}
