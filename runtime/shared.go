package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/script"
)

// Shared is what several Runtimes can share: the engine that compiles and keeps modules, the
// script interpreters, the JavaScript bytecode, the compilation cache and the admission control
// (one run queue, one compile limit, one memory budget for all of them). A server with tenants
// makes one Shared and a Runtime per tenant on it (Config.Shared): each tenant has its own
// skills, policy, secrets, run history and quotas, nothing of one tenant is reachable from
// another's Runtime, and the host is still bounded once, whatever the number of tenants. A
// module two tenants both have (the same bytes) is compiled once.
//
// A Runtime made without a Shared makes its own and closes it with itself.
type Shared struct {
	cfg       SharedConfig
	logger    *slog.Logger
	engine    *engine.Engine
	interps   *engine.Interpreters
	bytecode  *script.Cache
	admission *engine.Admission
	// cacheDir holds compiled code between processes ("" when none); privateCache is a cache
	// directory made for this Shared alone (removed by Close). See Runtime.cacheDir.
	cacheDir, privateCache string
	closeOnce              sync.Once
}

// SharedConfig is how a Shared is set up: what runs the modules, for every Runtime on it. A
// Runtime's own Config says what it runs (skills, policy, history, versions); the two never
// overlap. The zero SharedConfig is valid: the native engine, the compilation cache in the
// user's cache directory, the default admission.
type SharedConfig struct {
	// Logger receives the engine's own log (compilations, the cache). Nil discards it.
	Logger *slog.Logger
	// CacheDir holds wazero's compiled code between processes. It must be the current user's own
	// directory with mode 0700 (created so when missing), or NewShared fails. Empty means
	// $XDG_CACHE_HOME/skillbox/wazero (or the OS's equivalent), under the same rule; when that
	// cannot be determined or is refused, the engine logs a warning and runs without the cache.
	CacheDir string
	// NoCache turns the on-disk compilation cache off.
	NoCache bool
	// Admission bounds what runs at once, for every face and every Runtime on the Shared: see
	// [Admission].
	Admission Admission
	// Engine runs the modules: EngineNative ("", the default) or EngineExtism, the reference.
	Engine Engine
	// WarmInstances, above 0, keeps that many instances of each module that takes over a
	// millisecond to instantiate (standard Go: ~3 ms) made ahead of its runs, each used by one
	// run and replaced in the background, their memory charged to the admission budget (native
	// engine only; 0, the default, makes every instance when its run starts).
	WarmInstances int
	// OnCompile, when set, is told when a compilation starts and ends (a skill's module, an
	// interpreter), from the goroutine that compiles: it must be quick and safe for concurrent
	// use. The CLI shows progress on a terminal with it.
	OnCompile func(CompileEvent)
}

// NewShared makes what Runtimes made with Config.Shared share. Close it after them.
func NewShared(ctx context.Context, cfg SharedConfig) (*Shared, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Engine == "" {
		cfg.Engine = EngineNative
	}
	if !cfg.Engine.valid() {
		return nil, fmt.Errorf("runtime: unknown engine %q: use %q or %q", cfg.Engine, EngineNative, EngineExtism)
	}
	cfg.Admission = cfg.Admission.withDefaults()
	sh := &Shared{cfg: cfg, logger: logger}
	if !cfg.NoCache {
		dir, err := engine.OpenCacheDir(ctx, cfg.CacheDir, logger) // only a directory of ours, 0700
		if err != nil {
			return nil, fromEngine(err)
		}
		sh.cacheDir = dir
	}
	isolate := engine.CanCompileInChild()
	if isolate && sh.cacheDir == "" {
		// Compiling in a child hands the code over through a cache: without one of the user's,
		// a private one that lives as long as this Shared (os.MkdirTemp makes it 0700).
		dir, err := os.MkdirTemp("", "skillbox-compile-")
		if err != nil {
			return nil, fmt.Errorf("runtime: a private compilation cache: %w", err)
		}
		sh.cacheDir, sh.privateCache = dir, dir
	}
	// The budget evicts idle compiled code to make room for what waits: modules and
	// interpreters, each least recently used first.
	sh.admission = engine.NewAdmission(cfg.Admission.toEngine(), func(need int64) {
		sh.engine.Evict(need)
		sh.interps.Evict(need)
	})
	onCompile := engineOnCompile(cfg.OnCompile)
	sh.engine = engine.New(engine.Config{Kind: engine.Kind(cfg.Engine), Logger: logger, CacheDir: sh.cacheDir, Admission: sh.admission,
		WarmInstances: max(cfg.WarmInstances, 0), Isolate: isolate, OnCompile: onCompile})
	if !isolate {
		logger.Warn("modules compile in this process, where their memory and time cannot be stopped: call runtime.MaybeCompileChild() first in main to compile them in a child process")
	}
	sh.interps = engine.NewInterpreters(logger, sh.cacheDir, sh.admission, onCompile)
	sh.bytecode = script.NewBytecodeCache()
	return sh, nil
}

// Close refuses the runs still waiting for admission, then releases every compiled module and
// interpreter. Close the Runtimes on it first: their runs in flight hold modules. It is safe to
// call more than once.
func (sh *Shared) Close(ctx context.Context) error {
	sh.closeOnce.Do(func() {
		sh.admission.Close()
		sh.engine.Close()
		sh.interps.Close()
		if sh.privateCache != "" {
			_ = os.RemoveAll(sh.privateCache)
		}
	})
	return nil
}

// Stats returns the admission's counters: what every Runtime on sh holds together.
func (sh *Shared) Stats() AdmissionStats { return AdmissionStats(sh.admission.Stats()) }
