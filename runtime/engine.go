package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/internal/extismhost"
	"github.com/skillbox-dev/skillbox/internal/kernel"
)

// engine compiles modules once per (content hash, memory limit) and hands out compiled plugins
// for runs. A compiled plugin is closed only when no run holds it and it is either no longer in
// the registry or dropped to make room in the memory budget (idle ones first, least recently
// used first), so a reload never pulls a module from under a run. Compiling is admitted like a
// run: bounded in number, its peak memory charged to the budget; a compiled module kept warm is
// charged what it holds.
type engine struct {
	kind      Engine
	logger    *slog.Logger
	cacheDir  string // "": no on-disk cache
	admission *admission
	// warmInstances is Config.WarmInstances: the size of each slow-to-start module's pool.
	warmInstances int
	// isolate compiles each module in a child process first (see compilechild.go): the process
	// then only loads the compiled code from the cache.
	isolate bool
	// onCompile is Config.OnCompile.
	onCompile func(CompileEvent)

	hits, compiles, evictions atomic.Int64 // acquires served by a compiled module, compilations, evictions
	childCompiles             atomic.Int64 // compilations made in a child process
	// warm pools: runs served from one, instances made, time spent making them
	warmHits, warmMade, warmRefillNs atomic.Int64

	mu      sync.Mutex
	entries map[compileKey]*compiled
	// lives holds, for each Runtime on this engine (several share one through a [Shared]), the
	// hashes of its current registry (nil until its first retain: all live). A module is live
	// when any of them has it. A run that looked its skill up before a reload may acquire after
	// it; its entry is then born stale, so the last release closes it instead of leaking it.
	lives map[*Runtime]map[string]bool
	clock uint64 // orders uses, for least-recently-used eviction
}

type compileKey struct {
	hash  string
	pages uint32
}

type compiled struct {
	once sync.Once
	// One of the two, as the engine's kind says.
	native *nativeModule
	plugin *extism.CompiledPlugin
	// pool holds instances made ahead of runs (native, Config.WarmInstances > 0), made when a
	// run finds the module slow to instantiate (see pool.go).
	poolOnce sync.Once
	pool     atomic.Pointer[warmPool]
	cache    wazero.CompilationCache // this module's own handle on the cache directory
	err      error

	refs    int    // runs holding it
	stale   bool   // no longer in the registry, or evicted
	warm    int64  // bytes charged to the budget while it is kept
	lastUse uint64 // engine.clock at the last acquire
}

func newEngine(kind Engine, logger *slog.Logger, cacheDir string) *engine {
	return &engine{kind: kind, logger: logger, cacheDir: cacheDir, entries: map[compileKey]*compiled{}, lives: map[*Runtime]map[string]bool{}}
}

// acquire returns the compiled plugin of s, compiling it on first use (admitted, see Run). Call
// release when the run is done with it.
func (e *engine) acquire(ctx context.Context, s *Skill) (*compiled, error) {
	key := compileKey{hash: s.state().hash, pages: memoryPages(s.grant.Limits.MemoryMiB)}
	e.mu.Lock()
	c := e.entries[key]
	if c == nil {
		c = &compiled{stale: !e.isLive(key.hash)}
		if !c.stale {
			e.entries[key] = c
		}
	}
	c.refs++
	e.clock++
	c.lastUse = e.clock
	e.mu.Unlock()

	compiledNow := false
	c.once.Do(func() {
		compiledNow = true
		e.compiles.Add(1)
		done, err := e.admittedCompile(ctx, s, key.pages)
		var warm int64
		if err == nil {
			warm = warmCharge(s)
			e.admission.hold(warm)
		}
		// Under mu: evict, retain and warm read these from other goroutines.
		e.mu.Lock()
		if err == nil {
			c.native, c.plugin, c.cache = done.native, done.plugin, done.cache
		}
		c.err, c.warm = err, warm
		e.mu.Unlock()
	})
	if !compiledNow {
		e.hits.Add(1)
	}
	if c.err != nil {
		e.release(c)
		// Forget a transient failure (no room, a canceled caller) so the next run tries again; a
		// module the compiler refused stays refused (a fixed module has another hash): trying
		// again at every run would spend a compilation's memory and time on each.
		var ce *CompileError
		if !errors.As(c.err, &ce) {
			e.mu.Lock()
			if e.entries[key] == c {
				delete(e.entries, key)
			}
			e.mu.Unlock()
		}
		return nil, c.err
	}
	return c, nil
}

// admittedCompile compiles s once admitted (see admitCompile).
func (e *engine) admittedCompile(ctx context.Context, s *Skill, pages uint32) (*compiled, error) {
	src, err := e.source(s) // read and checked again, dropped once compiled
	if err != nil {
		return nil, err
	}
	done := compileProgress(e.onCompile, CompileEvent{What: "skill " + s.id, Skill: s.id, Bytes: len(src.wasm)})
	release, err := e.admitCompile(ctx, s, pages, src)
	if err != nil {
		done(err)
		return nil, fmt.Errorf("compile %s: %w", s.id, err)
	}
	defer release()
	c, err := e.compile(ctx, s, pages, src)
	done(err)
	return c, err
}

// admitCompile admits a compilation of s — a compile slot, and its charge in the budget — and,
// when compiles are isolated, makes it in a child process into the cache, so that what the caller
// compiles next, in this process, is a cache load. The caller calls release when it is done. The
// error is the admission's (see admission.acquire) or a *CompileError.
func (e *engine) admitCompile(ctx context.Context, s *Skill, pages uint32, src source) (release func(), err error) {
	t, err := e.admission.acquire(ctx, compileCharge(e.admission.cfg, s), false)
	if err != nil {
		return nil, err
	}
	release = func() { e.admission.release(t) }
	if e.isolate {
		a := e.admission.cfg
		child, err := compileInChild(ctx, e.cacheDir, pages, src, a.CompileMemory, a.CompileTimeout)
		if child.Ran {
			e.childCompiles.Add(1)
			e.logger.Debug("compiled in a child process", "skill", s.id, "ms", child.Took.Milliseconds(),
				"peak_mib", child.Peak>>20, "err", err)
		}
		if err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}

func (e *engine) release(c *compiled) {
	e.mu.Lock()
	c.refs--
	closeIt := c.stale && c.refs == 0
	e.mu.Unlock()
	if closeIt {
		e.drop(c)
	}
}

// drop closes a compiled module no one holds and gives its warm charge back.
func (e *engine) drop(c *compiled) {
	c.close(context.Background())
	e.mu.Lock()
	warm := c.warm
	c.warm = 0
	e.mu.Unlock()
	if warm > 0 {
		e.admission.free(warm)
	}
}

// ready reports whether c holds compiled code (read under engine.mu).
func (c *compiled) ready() bool { return c.native != nil || c.plugin != nil }

func (c *compiled) close(ctx context.Context) {
	if p := c.pool.Load(); p != nil {
		p.close()
	}
	if c.native != nil {
		c.native.close(ctx)
	}
	if c.plugin != nil {
		_ = c.plugin.Close(ctx)
	}
	if c.cache != nil {
		_ = c.cache.Close(ctx)
	}
}

// retain sets owner's live hashes to keep, and marks every compiled module no Runtime of this
// engine keeps live as stale, closing those no run holds. Called after a reload.
func (e *engine) retain(owner *Runtime, keep map[string]bool) {
	e.mu.Lock()
	e.lives[owner] = keep
	e.dropDead()
}

// dropDead marks stale, and closes when no run holds them, the modules no Runtime keeps live.
// It is called with e.mu held, and releases it.
func (e *engine) dropDead() {
	var toDrop []*compiled
	for k, c := range e.entries {
		if e.isLive(k.hash) {
			continue
		}
		delete(e.entries, k)
		c.stale = true
		if c.refs == 0 && c.ready() {
			toDrop = append(toDrop, c)
		}
	}
	e.mu.Unlock()
	for _, c := range toDrop {
		e.drop(c)
	}
}

// evict drops idle compiled modules, least recently used first, until need bytes of their warm
// charges are given back (or none is idle). The admission calls it when a run waits for memory.
func (e *engine) evict(need int64) {
	e.mu.Lock()
	var idle []*compiled
	var keys []compileKey
	for k, c := range e.entries {
		if c.refs == 0 && c.ready() {
			idle = append(idle, c)
			keys = append(keys, k)
		}
	}
	order := make([]int, len(idle))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return idle[order[a]].lastUse < idle[order[b]].lastUse })
	var toDrop []*compiled
	var freed int64
	for _, i := range order {
		if freed >= need {
			break
		}
		delete(e.entries, keys[i])
		idle[i].stale = true
		freed += idle[i].warm
		toDrop = append(toDrop, idle[i])
	}
	e.mu.Unlock()
	for _, c := range toDrop {
		e.evictions.Add(1)
		e.drop(c)
	}
}

// warm counts the compiled modules kept.
func (e *engine) warm() int {
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

func (e *engine) close(ctx context.Context) {
	e.mu.Lock()
	var all []*compiled
	for k, c := range e.entries {
		all = append(all, c)
		delete(e.entries, k)
	}
	e.mu.Unlock()
	for _, c := range all {
		e.drop(c)
	}
}

// compile compiles src, s's module, for the engine's kind, with its own handle on the cache.
func (e *engine) compile(ctx context.Context, s *Skill, pages uint32, src source) (*compiled, error) {
	rc := engineConfig(pages, src.stoppable)
	cache, err := newCache(e.cacheDir)
	if err != nil {
		return nil, err
	}
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	c := &compiled{cache: cache}
	if e.kind == EngineExtism {
		c.plugin, err = compileExtism(ctx, rc, src.wasm, pages)
	} else {
		c.native, err = compileNative(ctx, rc, src)
	}
	if err != nil {
		if cache != nil {
			_ = cache.Close(ctx)
		}
		return nil, fmt.Errorf("compile %s (sha256 %s): %w", s.id, s.state().hash[:12], err)
	}
	e.logger.Debug("compiled module", "skill", s.id, "sha256", s.state().hash[:12], "engine", e.kind, "stoppable", src.stoppable)
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

// memoryPages converts MiB to 64 KiB wasm pages.
func memoryPages(mib int64) uint32 {
	return uint32(mib * 16)
}
