package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/internal/cpython"
	"github.com/skillbox-dev/skillbox/internal/quickjs"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/codecache"
	"github.com/skillbox-dev/skillbox/spec"
)

// Interpreters compiles the interpreter of each script language once per memory limit (the cap is
// part of a wazero runtime's configuration, and the interpreter's own heap limit is set from it
// before its snapshot is taken) and keeps it for every run of that language and limit: a run is a
// fresh instance of it, never reused. Compiling is admitted like a module's compilation; a kept
// interpreter is charged to the memory budget, and dropped, least recently used first, when more
// than maxInterpreters are kept or the budget needs the room (package codecache).
type Interpreters struct {
	logger    *slog.Logger
	cacheDir  string
	admission *Admission
	// onCompile is runtime.Config.OnCompile.
	onCompile func(CompileEvent)
	// kept holds the compiled interpreters; its counters are the compilations and evictions.
	kept *codecache.Cache[interpKey, *Interp]
}

// interpKey names a compiled interpreter: JavaScript and TypeScript share QuickJS; Python is
// CPython.
type interpKey struct {
	engine string // "quickjs" or "cpython"
	pages  uint32
}

// Interp is one compiled interpreter.
type Interp struct {
	JS    *quickjs.Compiled // one of the two
	Py    *cpython.Compiled
	cache wazero.CompilationCache
}

// maxInterpreters bounds the interpreters kept compiled: one per language and memory limit in use.
const maxInterpreters = 8

// What a kept interpreter is charged: its compiled code (~16x its wasm: QuickJS ~1.5 MB, CPython
// ~10 MB) and what it holds for runs (QuickJS's snapshot, ~1 MiB; CPython's standard library
// zip, 3.7 MB, and its index).
const (
	quickjsWarm = 48 << 20
	cpythonWarm = 192 << 20
)

func NewInterpreters(logger *slog.Logger, cacheDir string, a *Admission, onCompile func(CompileEvent)) *Interpreters {
	return &Interpreters{logger: logger, cacheDir: cacheDir, admission: a, onCompile: onCompile,
		kept: codecache.New[interpKey](codecache.Config[*Interp]{MaxEntries: maxInterpreters, Free: a.free, Close: (*Interp).close})}
}

func engineOf(lang spec.Language) (string, error) {
	switch lang {
	case spec.LangJavaScript, spec.LangTypeScript:
		return "quickjs", nil
	case spec.LangPython:
		return "cpython", nil
	}
	return "", fmt.Errorf("%w: %s skills do not run in this build", errNoInterpreter, lang)
}

// Acquire returns the compiled interpreter of lang for a memory limit of memMiB, compiling it on
// first use. Release the entry when the run is done with it.
func (e *Interpreters) Acquire(ctx context.Context, lang spec.Language, memMiB int64) (*codecache.Entry[*Interp], error) {
	name, err := engineOf(lang)
	if err != nil {
		return nil, err
	}
	key := interpKey{engine: name, pages: MemoryPages(memMiB)}
	en, err := e.kept.Acquire(ctx, key, nil, func(ctx context.Context) (*Interp, int64, error) {
		return e.compile(ctx, key)
	})
	if errors.Is(err, codecache.ErrClosed) {
		err = run.ErrClosed
	}
	return en, err
}

func (e *Interpreters) Release(en *codecache.Entry[*Interp]) { e.kept.Release(en) }

// Stats counts the interpreters kept, compiled and evicted.
func (e *Interpreters) Stats() (kept int, compiles, evictions int64) {
	return e.kept.Kept(), e.kept.Compiles.Load(), e.kept.Evictions.Load()
}

// Evict drops idle interpreters until need bytes of their charges are given back.
func (e *Interpreters) Evict(need int64) { e.kept.Evict(need) }

// Close drops every interpreter; runs still holding one finish with it, and no new one is
// compiled.
func (e *Interpreters) Close() { e.kept.Close() }

// close releases what c holds.
func (c *Interp) close() {
	if c.JS != nil {
		_ = c.JS.Close(context.Background())
	}
	if c.Py != nil {
		_ = c.Py.Close(context.Background())
	}
	if c.cache != nil {
		_ = c.cache.Close(context.Background())
	}
}

// compile compiles the interpreter named by key, admitted like a module's compilation, and
// returns it with what keeping it is charged (already held from the budget).
func (e *Interpreters) compile(ctx context.Context, key interpKey) (c *Interp, warm int64, err error) {
	t, err := e.admission.Acquire(ctx, e.admission.cfg.CompileMemory+cacheLoadBase, false)
	if err != nil {
		return nil, 0, err
	}
	defer e.admission.Release(t)
	// Both interpreters are instrumented and stopped at their deadline by interrupt.Stop, not
	// wazero's interruption, which halves a CPU-bound run's speed.
	rc := CompileConfig(key.pages, true)
	cache, err := NewCache(e.cacheDir)
	if err != nil {
		return nil, 0, err
	}
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	c = &Interp{cache: cache}
	warm = quickjsWarm
	done := compileProgress(e.onCompile, CompileEvent{What: interpreterName(key.engine)})
	defer func() { done(err) }()
	if key.engine == "cpython" {
		c.Py, err = cpython.CompileIn(ctx, rc, e.cacheDir)
		warm = cpythonWarm
	} else {
		c.JS, err = quickjs.Compile(ctx, rc)
	}
	if err != nil {
		if cache != nil {
			_ = cache.Close(ctx)
		}
		return nil, 0, fmt.Errorf("compile the %s interpreter: %w", key.engine, err)
	}
	e.admission.hold(warm)
	e.logger.Debug("compiled an interpreter", "engine", key.engine, "memory_mib", key.pages/16)
	return c, warm, nil
}

// errNoInterpreter is a script language this build has no interpreter for.
var errNoInterpreter = errors.New("no interpreter for this language")
