package runtime

import (
	"errors"
	"time"

	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// The runtime's face of the engine that compiles and runs modules: what a program chooses
// (Engine, Admission), hears (CompileEvent, AdmissionStats) and matches (CompileError,
// CacheDirError). The engine has types of its own for each, with the same fields in the same
// order: the runtime converts between them here, so that a field added to one and not the other
// fails the build.

// Engine chooses what runs a skill's module.
type Engine string

const (
	// EngineNative, the default, implements the Extism kernel ABI in Go over raw wazero (package
	// internal/kernel): a run costs about what a wazero instance costs.
	EngineNative Engine = "native"
	// EngineExtism runs modules with Extism's go-sdk, whose kernel is a second wasm module in
	// every instance. It is kept as the reference the native engine is tested against.
	EngineExtism Engine = "extism"
)

func (e Engine) valid() bool { return e == EngineNative || e == EngineExtism }

// Admission bounds what runs at once, for every face alike (library, CLI, HTTP, MCP, agents):
// every run and every compilation is admitted here first. Zero fields are the defaults.
type Admission struct {
	// MaxRuns is how many runs execute at once (default 16).
	MaxRuns int
	// MaxQueue is how many runs may wait for admission (default 64); one more is refused busy.
	MaxQueue int
	// MaxWait bounds how long a run waits in the queue (default 30s); then it is refused busy.
	MaxWait time.Duration
	// MemoryBudget bounds, in bytes, what everything admitted may hold of the host's memory at
	// once: each run's charge (its memory limit plus what the host holds for it beyond its linear
	// memory; see runtime/internal/engine/charge.go), each compilation in progress, and each
	// compiled module kept warm (idle ones are dropped when a run needs the room). Default: half
	// of the machine's memory, at least 1 GiB.
	MemoryBudget int64
	// MaxCompiles is how many modules compile at once (default 1: compiling is CPU- and
	// memory-hungry, and a skill's first run or validation waits for it anyway).
	MaxCompiles int
	// CompileMemory is the most one compilation may hold (default 512 MiB; the bundled Go skills
	// need under 100 MiB): a compilation is charged it, and in a child process (see
	// MaybeCompileChild) one that needs more is stopped. CompileTimeout bounds its time
	// (default 60s; ten minutes in a binary built with -race, whose instrumented compiler runs
	// several times slower), likewise.
	CompileMemory  int64
	CompileTimeout time.Duration
}

func (a Admission) withDefaults() Admission {
	if a.MaxRuns <= 0 {
		a.MaxRuns = 16
	}
	if a.MaxQueue <= 0 {
		a.MaxQueue = 64
	}
	if a.MaxWait <= 0 {
		a.MaxWait = 30 * time.Second
	}
	if a.MemoryBudget <= 0 {
		a.MemoryBudget = engine.DefaultMemoryBudget()
	}
	if a.MaxCompiles <= 0 {
		a.MaxCompiles = 1
	}
	if a.CompileMemory <= 0 {
		a.CompileMemory = 512 << 20
	}
	if a.CompileTimeout <= 0 {
		a.CompileTimeout = engine.RaceSlowdown * 60 * time.Second
	}
	return a
}

// AdmissionStats is a snapshot of the admission control, for metrics.
type AdmissionStats struct {
	Running, Queued, Compiling int
	// MemoryInUse is what everything admitted is charged now; MemoryBudget the ceiling.
	MemoryInUse, MemoryBudget int64
	// PeakMemoryInUse, PeakRunning and PeakCompiling are the highest seen since New.
	PeakMemoryInUse int64
	PeakRunning     int
	PeakCompiling   int
	// MaxRuns is how many runs may execute at once (Admission.MaxRuns); MaxWait how long a run
	// may wait to be admitted (Admission.MaxWait).
	MaxRuns int
	MaxWait time.Duration
}

// CompileEvent says that a compilation started or ended. Compiling a large module the first
// time takes seconds (an interpreter, a standard-Go skill); later runs load it from the cache in
// milliseconds. A face shows the wait to a person (the CLI, on a terminal, once it lasts) and
// nothing otherwise: the runtime only says what happens.
type CompileEvent struct {
	// What is compiled, in words: "skill word-count", "the cpython interpreter".
	What string
	// Skill is the skill's id, or "" for an interpreter.
	Skill string
	// Bytes is the module's size, 0 when not known.
	Bytes int
	// Done is false when the compilation starts, true when it ends, with Took and Err.
	Done bool
	Took time.Duration
	Err  error
}

// CompileError is a module the compiler could not, or was not let, compile.
type CompileError struct {
	// Bound names what stopped it: "compileMemory", "compileTimeout", or "" for an error of the
	// module itself (Msg says what).
	Bound string
	Msg   string
}

func (e *CompileError) Error() string { return e.Msg }

// CacheDirError says why a compilation cache directory was refused: which path, what was found
// there and how to fix it.
type CacheDirError struct {
	Path  string // the offending path element
	Found string // what is wrong with it
	Fix   string // what the operator can do
	Err   error  // the underlying error, if any
}

func (e *CacheDirError) Error() string {
	msg := "compilation cache: " + e.Path + " " + e.Found
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func (e *CacheDirError) Unwrap() error { return e.Err }

// MaybeCompileChild lets this program compile modules in child processes of its own (see
// Admission.CompileMemory). Call it first thing in main, and in TestMain:
//
//	func main() {
//		runtime.MaybeCompileChild()
//		...
//	}
//
// In a process a Runtime started to compile a module, it compiles it into the compilation cache
// and exits; otherwise it returns at once, and Runtimes made afterwards compile in children.
func MaybeCompileChild() { engine.MaybeCompileChild() }

// engineModule is s's module as the engine compiles, charges and instantiates it. s is checked
// and executable: its verdict has the module's hash and bounds, and it has a grant.
func engineModule(s *registry.Skill) engine.Module {
	v := s.State()
	return engine.Module{ID: s.ID(), Hash: v.Hash, Size: v.Size, Info: v.Info, LinearLimit: v.LinearLimit,
		Limits: s.Grant().Limits, OutputFileBytes: s.Grant().OutputFileBytes(), Wasm: (*skillWasm)(s)}
}

// skillWasm reads a skill's module for the engine (see Skill.module).
type skillWasm registry.Skill

func (w *skillWasm) ReadWasm() ([]byte, error) { return (*registry.Skill)(w).Module() }

// toEngine is a as the engine's admission takes it.
func (a Admission) toEngine() engine.AdmissionConfig { return engine.AdmissionConfig(a) }

// engineOnCompile is fn (Config.OnCompile) as the engine calls it, nil for nil: a nil fn costs
// the engine nothing.
func engineOnCompile(fn func(CompileEvent)) func(engine.CompileEvent) {
	if fn == nil {
		return nil
	}
	return func(ev engine.CompileEvent) {
		ev.Err = fromEngine(ev.Err)
		fn(CompileEvent(ev))
	}
}

// fromEngine is err, an error of the engine, as a caller of the runtime matches it: the engine's
// compile error or cache directory refusal, wherever it is in err's chain, is a *CompileError
// or a *CacheDirError to errors.As, and err's message and the rest of its chain are kept.
func fromEngine(err error) error {
	var ce *engine.CompileError
	var cde *engine.CacheDirError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return asPublic(err, ce, (*CompileError)(ce))
	case errors.As(err, &cde):
		return asPublic(err, cde, (*CacheDirError)(cde))
	}
	return err
}

// asPublic is err, whose chain holds the engine's inner, with pub (inner as the runtime's type)
// in its chain: pub itself when err is inner.
func asPublic(err, inner, pub error) error {
	if err == inner {
		return pub
	}
	return &publicError{err: err, pub: pub}
}

// publicError is an engine error whose chain also holds the runtime's type for its cause.
type publicError struct {
	err error // as the engine said it
	pub error // its cause as the runtime's type, found first by errors.As
}

func (e *publicError) Error() string   { return e.err.Error() }
func (e *publicError) Unwrap() []error { return []error{e.pub, e.err} }
