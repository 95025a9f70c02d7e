package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/internal/cpython"
	"github.com/skillbox-dev/skillbox/internal/quickjs"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// interpreters compiles the interpreter of each script language once per memory limit (the cap is
// part of a wazero runtime's configuration, and the interpreter's own heap limit is set from it
// before its snapshot is taken) and keeps it for every run of that language and limit: a run is a
// fresh instance of it, never reused. Compiling is admitted like a module's compilation; a kept
// interpreter is charged to the memory budget, and dropped, least recently used first, when more
// than maxInterpreters are kept or the budget needs the room.
type interpreters struct {
	logger    *slog.Logger
	cacheDir  string
	admission *admission
	// onCompile is Config.OnCompile.
	onCompile func(CompileEvent)

	compiles, evictions atomic.Int64

	mu      sync.Mutex
	entries map[interpKey]*interp
	clock   uint64
	closed  bool
}

// interpKey names a compiled interpreter: JavaScript and TypeScript share QuickJS; Python is
// CPython.
type interpKey struct {
	engine string // "quickjs" or "cpython"
	pages  uint32
}

// interp is one compiled interpreter.
type interp struct {
	once  sync.Once
	js    *quickjs.Compiled // one of the two
	py    *cpython.Compiled
	cache wazero.CompilationCache
	err   error

	refs    int
	stale   bool
	warm    int64
	lastUse uint64
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

func newInterpreters(logger *slog.Logger, cacheDir string, a *admission) *interpreters {
	return &interpreters{logger: logger, cacheDir: cacheDir, admission: a, entries: map[interpKey]*interp{}}
}

// engineOf names the interpreter that runs lang.
func engineOf(lang spec.Language) (string, error) {
	switch lang {
	case spec.LangJavaScript, spec.LangTypeScript:
		return "quickjs", nil
	case spec.LangPython:
		return "cpython", nil
	}
	return "", fmt.Errorf("%w: %s skills do not run in this build", errNoInterpreter, lang)
}

// acquire returns the interpreter for lang under a memory limit of memMiB, compiling it on first
// use. Call release when the run is
// done with it.
func (e *interpreters) acquire(ctx context.Context, lang spec.Language, memMiB int64) (*interp, error) {
	name, err := engineOf(lang)
	if err != nil {
		return nil, err
	}
	key := interpKey{engine: name, pages: memoryPages(memMiB)}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, run.ErrClosed
	}
	c := e.entries[key]
	if c == nil {
		c = &interp{}
		e.entries[key] = c
	}
	c.refs++
	e.clock++
	c.lastUse = e.clock
	toDrop := e.trimLocked()
	e.mu.Unlock()
	e.dropAll(toDrop)

	c.once.Do(func() {
		e.compiles.Add(1)
		err := e.compile(ctx, key, c)
		e.mu.Lock()
		c.err = err
		e.mu.Unlock()
	})
	if c.err != nil {
		err := c.err
		e.release(c)
		// Forget the failure (a canceled caller, no room in the budget) so the next run tries
		// again: the interpreter itself is known to compile.
		e.mu.Lock()
		if e.entries[key] == c {
			delete(e.entries, key)
		}
		e.mu.Unlock()
		return nil, err
	}
	return c, nil
}

// compile compiles the interpreter named by key into c, admitted like a module's compilation.
func (e *interpreters) compile(ctx context.Context, key interpKey, c *interp) error {
	t, err := e.admission.acquire(ctx, e.admission.cfg.CompileMemory+cacheLoadBase, false)
	if err != nil {
		return err
	}
	defer e.admission.release(t)
	// The interpreters are not instrumented: wazero's interruption stops a run at its deadline.
	rc := engineConfig(key.pages, false)
	cache, err := newCache(e.cacheDir)
	if err != nil {
		return err
	}
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	var js *quickjs.Compiled
	var py *cpython.Compiled
	warm := int64(quickjsWarm)
	done := compileProgress(e.onCompile, CompileEvent{What: interpreterName(key.engine)})
	defer func() { done(err) }()
	if key.engine == "cpython" {
		py, err = cpython.Compile(ctx, rc)
		warm = cpythonWarm
	} else {
		js, err = quickjs.Compile(ctx, rc)
	}
	if err != nil {
		if cache != nil {
			_ = cache.Close(ctx)
		}
		return fmt.Errorf("compile the %s interpreter: %w", key.engine, err)
	}
	e.admission.hold(warm)
	e.mu.Lock()
	c.js, c.py, c.cache, c.warm = js, py, cache, warm
	e.mu.Unlock()
	e.logger.Debug("compiled an interpreter", "engine", key.engine, "memory_mib", key.pages/16)
	return nil
}

func (e *interpreters) release(c *interp) {
	e.mu.Lock()
	c.refs--
	closeIt := c.stale && c.refs == 0
	e.mu.Unlock()
	if closeIt {
		e.drop(c)
	}
}

// trimLocked takes the least recently used idle interpreters out while more than
// maxInterpreters are kept, and returns them to drop (outside mu).
func (e *interpreters) trimLocked() []*interp {
	if len(e.entries) <= maxInterpreters {
		return nil
	}
	return e.takeIdleLocked(func(n int, _ int64) bool { return len(e.entries) <= maxInterpreters })
}

// takeIdleLocked takes idle interpreters out, least recently used first, until enough says so.
func (e *interpreters) takeIdleLocked(enough func(taken int, freed int64) bool) []*interp {
	type idle struct {
		k interpKey
		c *interp
	}
	var all []idle
	for k, c := range e.entries {
		if c.refs == 0 && c.ready() {
			all = append(all, idle{k, c})
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].c.lastUse < all[b].c.lastUse })
	var out []*interp
	var freed int64
	for _, i := range all {
		if enough(len(out), freed) {
			break
		}
		delete(e.entries, i.k)
		i.c.stale = true
		freed += i.c.warm
		out = append(out, i.c)
	}
	return out
}

// evict drops idle interpreters until need bytes of their charges are given back.
func (e *interpreters) evict(need int64) {
	e.mu.Lock()
	toDrop := e.takeIdleLocked(func(_ int, freed int64) bool { return freed >= need })
	e.mu.Unlock()
	e.evictions.Add(int64(len(toDrop)))
	e.dropAll(toDrop)
}

func (e *interpreters) dropAll(cs []*interp) {
	for _, c := range cs {
		e.drop(c)
	}
}

// drop closes an interpreter no run holds and gives its charge back.
func (e *interpreters) drop(c *interp) {
	e.mu.Lock()
	js, py, cache, warm := c.js, c.py, c.cache, c.warm
	c.js, c.py, c.cache, c.warm = nil, nil, nil, 0
	e.mu.Unlock()
	if js != nil {
		_ = js.Close(context.Background())
	}
	if py != nil {
		_ = py.Close(context.Background())
	}
	if cache != nil {
		_ = cache.Close(context.Background())
	}
	if warm > 0 {
		e.admission.free(warm)
	}
}

// kept counts the interpreters kept compiled.
func (e *interpreters) kept() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, c := range e.entries {
		if c.ready() {
			n++
		}
	}
	return n
}

// close drops every interpreter; runs still holding one finish with ErrClosed from the
// interpreter, and no new one is compiled.
func (e *interpreters) close() {
	e.mu.Lock()
	e.closed = true
	var all []*interp
	for k, c := range e.entries {
		delete(e.entries, k)
		c.stale = true
		if c.refs == 0 {
			all = append(all, c)
		}
	}
	e.mu.Unlock()
	e.dropAll(all)
}

// errNoInterpreter is a script language this build has no interpreter for.
var errNoInterpreter = errors.New("no interpreter for this language")

// ready reports whether c holds a compiled interpreter (read under interpreters.mu).
func (c *interp) ready() bool { return c.js != nil || c.py != nil }
