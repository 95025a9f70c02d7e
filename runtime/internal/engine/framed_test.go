package engine

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/spec"
)

// wasmFile reads a module for the engine.
type wasmFile string

func (f wasmFile) ReadWasm() ([]byte, error) { return os.ReadFile(string(f)) }

// TestCompiledModulesAreFramed: a stoppable module is compiled with its measured frames as its
// call stack's weights, in a child process and in this one, so that its run is charged the
// bounded stack; a later compile of the same module reads the weights from its mark, without a
// child; and recursion past the bound traps as a stack overflow.
func TestCompiledModulesAreFramed(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("frames are read from wazero's amd64 code")
	}
	for _, isolate := range []bool{true, false} {
		t.Run(map[bool]string{true: "child", false: "in-process"}[isolate], func(t *testing.T) {
			cacheDir := t.TempDir()
			adm := NewAdmission(AdmissionConfig{MaxRuns: 4, MaxQueue: 4, MaxWait: time.Minute, MemoryBudget: 4 << 30,
				MaxCompiles: 1, CompileMemory: 1 << 30, CompileTimeout: 10 * time.Minute}, func(int64) {})
			newEngine := func() *Engine {
				e := New(Config{Kind: Native, Logger: slog.New(slog.DiscardHandler), CacheDir: cacheDir, Admission: adm, Isolate: isolate})
				t.Cleanup(e.Close)
				return e
			}
			path := "../../../testdata/wasm/recurse.wasm"
			wasm, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			info, _, err := wasmcheck.Check(wasm, wasmcheck.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			m := &Module{ID: "recurse", Hash: "recurse-" + t.Name(), Size: int64(len(wasm)), Info: info,
				Limits: spec.Limits{MemoryMiB: 1, TimeoutMs: 60_000}, Wasm: wasmFile(path)}
			e := newEngine()
			en, err := e.Acquire(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			c := en.Value()
			if !c.Native.Stoppable || !c.Native.Framed {
				t.Fatalf("stoppable %v, framed %v: want the module compiled with its frames", c.Native.Stoppable, c.Native.Framed)
			}
			stack := RunCharge(m, c) - RunCharge(m, nil) + StackReserve
			if stack != interrupt.StackCharge {
				t.Errorf("the run's stack is charged %d, want %d", stack, interrupt.StackCharge)
			}
			// Unbounded recursion ends on the count, not on wazero's 50 MB.
			ctx := context.Background()
			mod, err := c.Native.Instantiate(ctx, c.Native.TakeSlot().Config)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Native.Call(ctx, mod, false, "execute", nil)
			_ = mod.Close(ctx)
			if !errors.Is(err, interrupt.ErrStackOverflow) {
				t.Fatalf("unbounded recursion: %v, want ErrStackOverflow", err)
			}
			e.Release(en)

			// Another engine on the same cache: framed from the mark, no child.
			again := newEngine()
			en, err = again.Acquire(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Release(en)
			if !en.Value().Native.Framed || again.Stats().ChildCompiles != 0 {
				t.Errorf("from the mark: framed %v, %d child compiles", en.Value().Native.Framed, again.Stats().ChildCompiles)
			}
		})
	}
}

// TestAStaleMarkIsNotTrusted: a mark whose table is for another module leaves the estimates,
// and the whole stack charged.
func TestAStaleMarkIsNotTrusted(t *testing.T) {
	wasm, err := os.ReadFile("../../../testdata/wasm/recurse.wasm")
	if err != nil {
		t.Fatal(err)
	}
	src := sourceFor(Native, wasm, slog.New(slog.DiscardHandler), "recurse")
	if !src.Stoppable {
		t.Fatal("recurse.wasm is not instrumented")
	}
	for name, table := range map[string][]byte{"empty": nil, "another module's": []byte(strings.Repeat("x", 40))} {
		if got := src.framedBy(table); got.Framed || string(got.Wasm) != string(src.Wasm) {
			t.Errorf("%s table: framed %v", name, got.Framed)
		}
	}
}
