package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/skillbox-dev/skillbox/internal/extismhost"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/kernel"
)

// NativeModule is a module compiled for the native engine: its own wazero runtime (the memory
// limit is a runtime setting) holding WASI, the kernel and the Skillbox host functions, and the
// compiled guest, instantiated afresh for every run.
type NativeModule struct {
	runtime wazero.Runtime
	module  wazero.CompiledModule
	exports map[string]api.FunctionDefinition
	// config is every instance's module configuration but what is the run's own (its stdout,
	// stderr and sleep), made once: each With of a ModuleConfig copies it.
	config wazero.ModuleConfig
	// init is the guest runtime's initialiser, called before the entrypoint as Extism calls it:
	// "_initialize" (a WASI reactor), "__wasm_call_ctors" (a WASI command), or "" (none).
	// hsInit is set for a Haskell module (hs_init(0, 0), after _initialize when exported).
	init   string
	hsInit bool
	// slots are the ioSlots of runs that ended, for the next runs to reuse.
	slots sync.Pool
	// Stoppable is the source's (see source): every instance is stopped with interrupt.Stop
	// when its run's context ends (see stopWhenDone), as wazero's interruption is off.
	Stoppable bool
	// Framed is the source's: its call stack's weights are its measured frames (framed.go).
	Framed bool
}

// compileNative compiles src for the native engine under rc.
func compileNative(ctx context.Context, rc wazero.RuntimeConfig, src Source) (*NativeModule, error) {
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	fail := func(err error) (*NativeModule, error) {
		_ = r.Close(ctx)
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		return fail(fmt.Errorf("instantiate WASI: %w", err))
	}
	if _, err := kernel.Instantiate(ctx, r); err != nil {
		return fail(fmt.Errorf("instantiate the kernel: %w", err))
	}
	if _, err := extismhost.Instantiate(ctx, r); err != nil {
		return fail(fmt.Errorf("instantiate the host functions: %w", err))
	}
	cm, err := r.CompileModule(ctx, src.Wasm)
	if err != nil {
		return fail(err)
	}
	// Anonymous, so one compiled module has any number of instances; no start functions:
	// Extism never calls _start, and call initialises the guest runtime itself.
	config := BaseModuleConfig().WithName("").WithStartFunctions()
	m := &NativeModule{runtime: r, module: cm, exports: cm.ExportedFunctions(), config: config, Stoppable: src.Stoppable, Framed: src.Framed}
	noParams := func(name string) bool {
		d, ok := m.exports[name]
		return ok && len(d.ParamTypes()) == 0
	}
	if d, ok := m.exports["hs_init"]; ok && len(d.ParamTypes()) == 2 {
		m.hsInit = true
		if _, ok := m.exports["_initialize"]; ok {
			m.init = "_initialize"
		}
	} else if noParams("_initialize") {
		m.init = "_initialize"
	} else if noParams("__wasm_call_ctors") {
		m.init = "__wasm_call_ctors"
	}
	return m, nil
}

// IOSlot is a runSlot and the module configuration whose stdout, stderr and sleep go through it,
// made once and reused run after run: every With of a ModuleConfig copies it, four copies a run.
// A run fills the slot with its writers and deadline before it instantiates, and gives it back
// (see putSlot) once its instance is closed, so no instance writes through a slot another run
// holds.
type IOSlot struct {
	runSlot
	Config wazero.ModuleConfig
}

// TakeSlot returns an empty slot for a fresh instance of m.
func (m *NativeModule) TakeSlot() *IOSlot {
	if s, ok := m.slots.Get().(*IOSlot); ok {
		return s
	}
	s := &IOSlot{}
	s.Config = m.config.WithNanosleep(s.sleep).WithStdout(slotWriter{&s.runSlot, false}).WithStderr(slotWriter{&s.runSlot, true})
	return s
}

// PutSlot empties s, whose instance is closed, and keeps it for another run.
func (m *NativeModule) PutSlot(s *IOSlot) {
	s.reset()
	m.slots.Put(s)
}

// StopWhenDone stops mod when ctx ends, if the module is stoppable (wazero's interruption does it
// otherwise). The caller calls the returned function once mod's call has returned; it reports
// false if the stop was made, or is being made.
func (m *NativeModule) StopWhenDone(ctx context.Context, mod api.Module) (release func() bool) {
	if !m.Stoppable {
		return func() bool { return true }
	}
	return interrupt.StopWhenDone(ctx, mod)
}

func (m *NativeModule) close(ctx context.Context) {
	_ = m.runtime.Close(ctx)
}

// Has reports whether the module exports a function called name.
func (m *NativeModule) Has(name string) bool {
	_, ok := m.exports[name]
	return ok
}

// Instantiate makes a fresh instance with mc (made from m.config). ctx carries the run's memory
// allocator, and the kernel and Call for a start section that calls them.
func (m *NativeModule) Instantiate(ctx context.Context, mc wazero.ModuleConfig) (api.Module, error) {
	mod, err := m.runtime.InstantiateModule(ctx, m.module, mc)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	return mod, nil
}

// Call calls entry as Extism's go-sdk does: the guest runtime's initialiser first, then the
// entrypoint; a WASI exit with code 0 is success, another exit code is the return code of an
// entrypoint without results. ctx carries the kernel and the Call. A guest's error_set is
// returned as the error when the call itself succeeded.
func (m *NativeModule) Call(ctx context.Context, mod api.Module, initialised bool, entry string, k *kernel.Kernel) (uint32, error) {
	f := mod.ExportedFunction(entry)
	if f == nil {
		return 1, fmt.Errorf("unknown function: %s", entry)
	}
	if n := len(f.Definition().ResultTypes()); n > 1 {
		return 1, fmt.Errorf("function %s has %v results, expected 0 or 1", entry, n)
	}
	if !initialised && entry != "_start" && entry != "_initialize" {
		if err := m.initialise(ctx, mod); err != nil {
			return 1, fmt.Errorf("failed to initialize runtime: %w", m.overflowed(mod, err))
		}
	}
	res, err := f.Call(ctx)
	if err != nil {
		err = m.overflowed(mod, err)
		if code, ok := exitCode(err); ok {
			if code == 0 {
				err = nil
			}
			if len(res) == 0 {
				res = []uint64{uint64(code)}
			}
		}
	}
	var rc uint32
	switch {
	case len(res) > 0:
		rc = uint32(res[0])
	case err != nil:
		rc = 1
	}
	if err != nil {
		return rc, err
	}
	if msg := k.Error(); msg != "" {
		return rc, errors.New(msg)
	}
	return rc, nil
}

func (m *NativeModule) initialise(ctx context.Context, mod api.Module) error {
	if m.init != "" {
		_, err := mod.ExportedFunction(m.init).Call(ctx)
		// Extism logs a Haskell module's failed _initialize and goes on to hs_init.
		if err != nil && !m.hsInit {
			return err
		}
	}
	if m.hsInit {
		_, err := mod.ExportedFunction("hs_init").Call(ctx, 0, 0)
		return err
	}
	return nil
}

// overflowed names a trap on the stack count Instrument adds (interrupt.StackOverflow) as a stack
// overflow; a module that is not instrumented has no such count.
func (m *NativeModule) overflowed(mod api.Module, err error) error {
	if !m.Stoppable {
		return err
	}
	return interrupt.StackOverflow(mod, err)
}

// exitCode returns the code of a WASI exit that err is.
func exitCode(err error) (uint32, bool) {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), true
	}
	return 0, false
}

// SleepUntil is a WASI nanosleep (poll_oneoff sleeps with it) that ends early when done is
// closed: time.Sleep would outlive the run's deadline.
func SleepUntil(done <-chan struct{}) func(ns int64) {
	return func(ns int64) {
		t := time.NewTimer(time.Duration(ns))
		defer t.Stop()
		select {
		case <-t.C:
		case <-done:
		}
	}
}

// BaseModuleConfig is what every instance gets: real clocks, crypto/rand, nothing else of the
// host (no arguments, environment or files: WASI sees none).
func BaseModuleConfig() wazero.ModuleConfig {
	return wazero.NewModuleConfig().WithRandSource(rand.Reader).WithSysWalltime().WithSysNanotime()
}
