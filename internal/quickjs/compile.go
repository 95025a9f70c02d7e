package quickjs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync/atomic"

	quickjswasi "github.com/aperturerobotics/go-quickjs-wasi-reactor"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/skillbox-dev/skillbox/internal/leb128"
)

// reactorFrames is the stack each of the reactor's functions takes (custom sections stripped),
// as wazero's compiler sized it on amd64: the weights of its call stack's bound (package
// wazevoframes). Its test checks it, and makes it again with -update-frames.
//
//go:embed quickjs.frames
var reactorFrames []byte

// Compiled is the QuickJS reactor compiled into one wazero.Runtime of its own, with the WASI
// functions it imports (fd_write replaced by the SkillContext bridge). It is safe for concurrent
// runs; each run instantiates it afresh.
type Compiled struct {
	runtime wazero.Runtime
	module  wazero.CompiledModule
	// pages is the instance's memory cap in 64 KiB pages, as the runtime configuration set it.
	pages uint32
	// snap is the instance after setup, which runs restore instead of setting up; nil when the
	// reactor has state outside its memory that a snapshot would miss (see snapshot).
	snap *snapshot
	// closed is set by Close: Run checks it rather than instantiating into a closed runtime.
	closed atomic.Bool
}

// ErrClosed is returned by Run on a Compiled that was closed.
var ErrClosed = errors.New("quickjs: compiled reactor is closed")

// Compile makes a wazero.Runtime with rc and compiles the reactor into it. rc is the caller's
// engine configuration — its memory limit, compilation cache and interruption: the caller keeps
// one configuration for every module it compiles, so the cache finds what it compiled before.
// The reactor is instrumented (package interrupt): its call stack is bounded, and a run is
// stopped at its deadline by interrupt.Stop, so rc should not close modules when their context
// is done (WithCloseOnContextDone(false)): wazero's interruption would stop it too, at a cost to
// every loop.
//
// The reactor's custom sections (DWARF, names, producers) are stripped before compiling: wazero
// v1.12 loads a module with DWARF from the file cache in seconds instead of a tenth of one, and
// its cache key ignores the debug-info setting, so only stripping makes the cache safe to share.
//
// # Errors
//
// The errors of wazero's compilation and instantiation of the WASI host module, wrapped.
func Compile(ctx context.Context, rc wazero.RuntimeConfig) (*Compiled, error) {
	return compile(ctx, rc, true)
}

// compile is Compile, or without the instrumentation when instrument is false: the floor
// BenchmarkCPU measures the instrumented reactor against, which nothing can stop.
func compile(ctx context.Context, rc wazero.RuntimeConfig, instrument bool) (*Compiled, error) {
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	fail := func(err error) (*Compiled, error) {
		_ = r.Close(ctx)
		return nil, err
	}
	b := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	i32 := api.ValueTypeI32
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(fdWrite), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("fd", "iovs", "iovs_len", "result.nwritten").Export("fd_write")
	if _, err := b.Instantiate(ctx); err != nil {
		return fail(fmt.Errorf("quickjs: instantiate WASI: %w", err))
	}
	wasm, err := stripCustom(quickjswasi.QuickJSWASM)
	if err != nil {
		return fail(fmt.Errorf("quickjs: strip the reactor: %w", err))
	}
	inst := wasm
	if instrument {
		if inst, err = instrumented(wasm); err != nil {
			return fail(err)
		}
	}
	cm, err := r.CompileModule(ctx, inst)
	if err != nil {
		return fail(fmt.Errorf("quickjs: compile the reactor: %w", err))
	}
	c := &Compiled{runtime: r, module: cm}
	// The cap is the runtime's: instantiate once to read it (the reactor declares no maximum).
	m, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return fail(fmt.Errorf("quickjs: instantiate the reactor: %w", err))
	}
	if max, ok := m.Memory().Definition().Max(); ok {
		c.pages = max
	} else {
		c.pages = 65536
	}
	_ = m.Close(ctx)
	if n, err := mutableGlobals(wasm); err != nil || n != 1 {
		// Never expected of the pinned reactor: run without a snapshot rather than from a wrong one.
		return c, nil
	}
	if c.snap, err = takeSnapshot(ctx, c); err != nil {
		return fail(fmt.Errorf("quickjs: set up the interpreter: %w", err))
	}
	return c, nil
}

// instrumented is the reactor instrumented for its call stack's bound (interrupt.StackBytes),
// which the run's memory charge counts on, for interrupt.Stop, which ends a run at its deadline,
// and for its C stack's bound (see cStackGuard).
func instrumented(wasm []byte) ([]byte, error) {
	guard, err := cStackGuard(wasm)
	if err != nil {
		return nil, fmt.Errorf("quickjs: the reactor's C stack: %w", err)
	}
	inst, err := interrupt.InstrumentWithTable(wasm, reactorFrames, guard)
	if err != nil {
		return nil, fmt.Errorf("quickjs: instrument the reactor with quickjs.frames: %w", err)
	}
	return inst, nil
}

// reactorStack is the size of the reactor's C stack: wasm-ld's default, 64 KiB, with
// __stack_pointer starting at its top, right above the static data, and the stack growing down
// towards that data (TestTheCStackIsAboveTheData checks the layout). stackMargin is kept above the
// data for the frames of functions that never store the pointer back (leaves).
const (
	reactorStack = 64 << 10
	stackMargin  = 8 << 10
)

// cStackGuard bounds the reactor's C stack pointer (its global 0, the one mutable global) to
// its stack. QuickJS's own stack check does not work in this build: deep recursion ran the stack
// down through the static data (the allocator's state, the atoms), and a run went on with them
// corrupted, returning a wrong value, or trapped only far below.
func cStackGuard(wasm []byte) (interrupt.Guard, error) {
	sp, err := stackPointer(wasm)
	if err != nil {
		return interrupt.Guard{}, err
	}
	if sp < reactorStack+stackMargin {
		return interrupt.Guard{}, fmt.Errorf("__stack_pointer starts at %d, under the %d bytes of its stack", sp, reactorStack)
	}
	return interrupt.Guard{Global: 0, Min: sp - reactorStack + stackMargin}, nil
}

// Close releases the runtime and the compiled code. Runs under way are closed with it; later
// runs return ErrClosed.
func (c *Compiled) Close(ctx context.Context) error {
	c.closed.Store(true)
	return c.runtime.Close(ctx)
}

// stripCustom returns wasm without its custom sections (id 0).
func stripCustom(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 {
		return nil, errors.New("shorter than a wasm header")
	}
	out := append(make([]byte, 0, len(wasm)), wasm[:8]...)
	for p := 8; p < len(wasm); {
		id := wasm[p]
		size, body, err := leb128.U32(wasm, p+1, len(wasm))
		if err != nil {
			return nil, fmt.Errorf("section at %d: %w", p, err)
		}
		end := body + int(size)
		if end > len(wasm) {
			return nil, fmt.Errorf("section at %d runs past the end", p)
		}
		if id != 0 {
			out = append(out, wasm[p:end]...)
		}
		p = end
	}
	return out, nil
}
