// Package engine is what compiles and runs skills' modules for package runtime: it compiles a
// module once per content and memory limit (in a child process when the program can,
// compilechild.go), keeps it in a codecache while a version uses it (engine.go, enginelive.go),
// admits runs and compilations to one run queue, compile limit and memory budget (admission.go,
// charge.go), instantiates modules with metered memories (memory.go, mappings.go) on the native
// kernel or Extism's go-sdk (native.go, source.go), makes instances ahead of slow-to-start
// modules (pool.go), keeps the script interpreters compiled (interp.go), and checks the on-disk
// compilation cache's directory (cachedir.go).
//
// Package runtime is its only user: it hands the engine a Module made from a checked skill, and
// converts the engine's types into its public ones (runtime/engineapi.go). The engine never
// imports runtime.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/internal/extismhost"
	"github.com/skillbox-dev/skillbox/internal/kernel"
	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/codecache"
	"github.com/skillbox-dev/skillbox/spec"
)

// Engine compiles modules once per (content hash, memory limit) and hands out compiled plugins
// for runs. A compiled plugin is closed only when no run holds it and it is either no longer in
// the registry or dropped to make room in the memory budget (idle ones first, least recently
// used first), so a reload never pulls a module from under a run. Compiling is admitted like a
// run: bounded in number, its peak memory charged to the budget; a compiled module kept warm is
// charged what it holds.
type Engine struct {
	kind      Kind
	logger    *slog.Logger
	cacheDir  string // "": no on-disk cache
	admission *Admission
	// warmInstances is runtime.Config.WarmInstances: the size of each slow-to-start module's pool.
	warmInstances int
	// isolate compiles each module in a child process first (see compilechild.go): the process
	// then only loads the compiled code from the cache.
	isolate bool
	// onCompile is runtime.Config.OnCompile.
	onCompile func(CompileEvent)

	// modules keeps the compiled modules (see package codecache): its counters are the
	// acquires served by a compiled module, the compilations and the evictions.
	modules       *codecache.Cache[compileKey, *Compiled]
	childCompiles atomic.Int64 // compilations made in a child process
	// warm pools: runs served from one, instances made, time spent making them
	warmHits, warmMade, warmRefillNs atomic.Int64

	mu sync.Mutex
	// lives holds, for each owner of this engine (a Runtime: several share one through a
	// runtime.Shared), the hashes of its current registry (nil until its first retain: all live). A
	// module is live when any of them has it. A run that looked its skill up before a reload may
	// acquire after it; its entry is then born stale, so the last release closes it instead of
	// leaking it.
	lives map[*Owner]map[string]bool
}

// Kind is what runs modules: runtime.Engine's values.
type Kind string

const (
	Native Kind = "native" // the Extism kernel ABI in Go over raw wazero (native.go)
	Extism Kind = "extism" // Extism's go-sdk, the reference
)

// Module is what the engine knows of a skill's module: what names it, what the engine
// charges for it, and how to read it. The runtime makes one from a checked skill version
// (runtime.Skill.engineModule).
type Module struct {
	// ID is the skill's, for logs and compile events.
	ID string
	// Hash is the sha256 of the module file (hex): with the memory limit, it keys the compiled
	// code.
	Hash string
	// Size is the module's size in bytes, Info what its bounds check learned of it, and
	// LinearLimit what its linear memories may hold together (the memory limit less its tables'
	// share).
	Size        int64
	Info        *wasmcheck.Info
	LinearLimit uint64
	// Limits are the skill's granted limits: its memory limit, its timeout, and what the host
	// buffers for it. OutputFileBytes is the largest file its /output takes (0: none).
	Limits          spec.Limits
	OutputFileBytes int64
	// Wasm reads the bytes to compile: read again, and checked to be the module Hash names.
	Wasm WasmReader
}

// WasmReader reads a module's bytes when the engine compiles it (an interface, not a func: the
// runtime's reader is its skill itself, so making a Module for every run costs no
// allocation).
type WasmReader interface {
	ReadWasm() ([]byte, error)
}

type compileKey struct {
	hash  string
	pages uint32
}

// Compiled is one compiled module, kept in the engine's cache.
type Compiled struct {
	// One of the two, as the engine's kind says.
	Native *NativeModule
	Plugin *extism.CompiledPlugin
	// pool holds instances made ahead of runs (native, runtime.Config.WarmInstances > 0), made when
	// a run finds the module slow to instantiate (see pool.go).
	poolOnce sync.Once
	pool     atomic.Pointer[warmPool]
	cache    wazero.CompilationCache // this module's own handle on the cache directory
}

// Config is what an engine is made with (see the engine's fields of the same names).
type Config struct {
	Kind          Kind
	Logger        *slog.Logger
	CacheDir      string
	Admission     *Admission
	WarmInstances int
	Isolate       bool
	OnCompile     func(CompileEvent)
}

func New(cfg Config) *Engine {
	a := cfg.Admission
	e := &Engine{kind: cfg.Kind, logger: cfg.Logger, cacheDir: cfg.CacheDir, admission: a, warmInstances: cfg.WarmInstances,
		isolate: cfg.Isolate, onCompile: cfg.OnCompile, lives: map[*Owner]map[string]bool{}}
	e.modules = codecache.New[compileKey](codecache.Config[*Compiled]{
		Free:  a.free,
		Close: func(c *Compiled) { c.close(context.Background()) },
		// A module the compiler refused stays refused (a fixed module has another hash): trying
		// again at every run would spend a compilation's memory and time on each. Any other
		// failure (no room, a canceled caller) is forgotten, and the next run tries again.
		Keep: func(err error) bool {
			var ce *CompileError
			return errors.As(err, &ce)
		},
	})
	return e
}

// Acquire returns the compiled module of m, compiling it on first use (admitted, see
// runtime.Runtime.Run), and charging what keeping it holds to the budget. Release the entry when
// the run is done with it.
func (e *Engine) Acquire(ctx context.Context, m *Module) (*codecache.Entry[*Compiled], error) {
	key := compileKey{hash: m.Hash, pages: MemoryPages(m.Limits.MemoryMiB)}
	en, err := e.modules.Acquire(ctx, key, e.live, func(ctx context.Context) (*Compiled, int64, error) {
		c, err := e.admittedCompile(ctx, m, key.pages)
		if err != nil {
			return nil, 0, err
		}
		warm := WarmCharge(m)
		e.admission.hold(warm)
		return c, warm, nil
	})
	if errors.Is(err, codecache.ErrClosed) {
		err = run.ErrClosed
	}
	return en, err
}

// live reports whether some owner of the engine keeps the module of key live.
func (e *Engine) live(key compileKey) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.isLive(key.hash)
}

// admittedCompile compiles m once admitted (see admitCompile).
func (e *Engine) admittedCompile(ctx context.Context, m *Module, pages uint32) (*Compiled, error) {
	src, err := e.Source(m) // read and checked again, dropped once compiled
	if err != nil {
		return nil, err
	}
	done := e.CompileStarted(CompileEvent{What: "skill " + m.ID, Skill: m.ID, Bytes: len(src.Wasm)})
	src, release, err := e.AdmitCompile(ctx, m, pages, src)
	if err != nil {
		done(err)
		return nil, fmt.Errorf("compile %s: %w", m.ID, err)
	}
	defer release()
	c, err := e.compile(ctx, m, pages, src)
	done(err)
	return c, err
}

// AdmitCompile admits a compilation of m — a compile slot, and its charge in the budget — and,
// when compiles are isolated, makes it in a child process into the cache, so that what the caller
// compiles next, in this process, is a cache load. It returns the source to compile: for a
// stoppable one, instrumented again with its measured frames when they could be read
// (framed.go), else src. The caller calls release when it is done. The error is the admission's
// (see Admission.Acquire) or a *CompileError.
func (e *Engine) AdmitCompile(ctx context.Context, m *Module, pages uint32, src Source) (Source, func(), error) {
	t, err := e.admission.Acquire(ctx, CompileCharge(e.admission.cfg, m), false)
	if err != nil {
		return src, nil, err
	}
	release := func() { e.admission.Release(t) }
	if e.isolate {
		a := e.admission.cfg
		child, table, err := compileInChild(ctx, e.cacheDir, pages, src, a.CompileMemory, a.CompileTimeout)
		if child.Ran {
			e.childCompiles.Add(1)
			e.logger.Debug("compiled in a child process", "skill", m.ID, "ms", child.Took.Milliseconds(),
				"peak_mib", child.Peak>>20, "framed", len(table) > 0, "err", err)
		}
		if err != nil {
			release()
			return src, nil, err
		}
		return src.framedBy(table), release, nil
	}
	return e.frameInProcess(ctx, m, pages, src), release, nil
}

// frameInProcess is the child's framing (see framed.go), in this process, for a runtime that
// compiles in its own: the weights kept in the module's mark, as a child's are.
func (e *Engine) frameInProcess(ctx context.Context, m *Module, pages uint32, src Source) Source {
	if !src.Stoppable || e.cacheDir == "" {
		return src
	}
	mark := markPath(e.cacheDir, pages, src)
	if table, ok := readMark(mark); ok {
		return src.framedBy(table)
	}
	framed, weights, err := frameSource(ctx, e.cacheDir, pages, src)
	if err != nil {
		e.logger.Debug("module's frames not measured: its run is charged the whole stack", "skill", m.ID, "err", err)
		if ctx.Err() == nil { // a caller that gave up says nothing of the module
			writeMark(mark, nil)
		}
		return src
	}
	writeMark(mark, wazevoframes.Encode(src.Wasm, weights))
	return framed
}

func (e *Engine) Release(en *codecache.Entry[*Compiled]) { e.modules.Release(en) }

// CompileStarted tells OnCompile that the compilation ev names started, and returns the function
// that tells it it ended (see compileProgress).
func (e *Engine) CompileStarted(ev CompileEvent) (done func(error)) {
	return compileProgress(e.onCompile, ev)
}

func (c *Compiled) close(ctx context.Context) {
	if p := c.pool.Load(); p != nil {
		p.close()
	}
	if c.Native != nil {
		c.Native.close(ctx)
	}
	if c.Plugin != nil {
		_ = c.Plugin.Close(ctx)
	}
	if c.cache != nil {
		_ = c.cache.Close(ctx)
	}
}

// Retain sets owner's live hashes to keep, and drops every compiled module no owner of this
// engine keeps live, closing those no run holds. Called after a reload.
func (e *Engine) Retain(owner *Owner, keep map[string]bool) {
	e.mu.Lock()
	e.lives[owner] = keep
	e.mu.Unlock()
	e.dropDead()
}

// dropDead drops the modules no owner keeps live, closing those no run holds.
func (e *Engine) dropDead() { e.modules.Retain(e.live) }

// Evict drops idle compiled modules, least recently used first, until need bytes of their warm
// charges are given back (or none is idle). The admission calls it when a run waits for memory.
func (e *Engine) Evict(need int64) { e.modules.Evict(need) }

// Stats are the engine's counters: runtime.Stats's fields of the same names.
type Stats struct {
	CompileHits, Compiles, Evictions, ChildCompiles int64
	WarmModules                                     int
	WarmHits, WarmMade, WarmRefillNs                int64
}

func (e *Engine) Stats() Stats {
	return Stats{CompileHits: e.modules.Hits.Load(), Compiles: e.modules.Compiles.Load(),
		Evictions: e.modules.Evictions.Load(), ChildCompiles: e.childCompiles.Load(), WarmModules: e.modules.Kept(),
		WarmHits: e.warmHits.Load(), WarmMade: e.warmMade.Load(), WarmRefillNs: e.warmRefillNs.Load()}
}

func (e *Engine) Close() { e.modules.Close() }

// compile compiles src, m's module, for the engine's kind, with its own handle on the cache.
func (e *Engine) compile(ctx context.Context, m *Module, pages uint32, src Source) (*Compiled, error) {
	rc := CompileConfig(pages, src.Stoppable)
	cache, err := NewCache(e.cacheDir)
	if err != nil {
		return nil, err
	}
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	c := &Compiled{cache: cache}
	if e.kind == Extism {
		c.Plugin, err = compileExtism(ctx, rc, src.Wasm, pages)
	} else {
		c.Native, err = compileNative(ctx, rc, src)
	}
	if err != nil {
		if cache != nil {
			_ = cache.Close(ctx)
		}
		return nil, fmt.Errorf("compile %s (sha256 %s): %w", m.ID, m.Hash[:12], err)
	}
	e.logger.Debug("compiled module", "skill", m.ID, "sha256", m.Hash[:12], "engine", e.kind, "stoppable", src.Stoppable)
	return c, nil
}

// compileExtism compiles wasm as an Extism plugin.
func compileExtism(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, pages uint32) (*extism.CompiledPlugin, error) {
	manifest := extism.Manifest{
		// No Hash: the bytes are the checked module (tables may have got a maximum), not the file
		// whose hash names the skill, and they never left this process.
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		// The Extism kernel's own HTTP stays off: AllowedHosts is empty, so http_request is
		// refused; skills fetch through skillbox_fetch, which applies the grant.
		Memory: &extism.ManifestMemory{MaxPages: pages, MaxHttpResponseBytes: 0, MaxVarBytes: kernel.MaxVarBytes},
	}
	return extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, extismhost.Functions())
}

// MemoryPages converts MiB to 64 KiB wasm pages.
func MemoryPages(mib int64) uint32 {
	return uint32(mib * 16)
}
