package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/skillbox-dev/skillbox/runtime/internal/codecache"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
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
	bytecode  *codecache.Cache[string, []byte]
	admission *engine.Admission
	// cacheDir holds compiled code between processes ("" when none); privateCache is a cache
	// directory made for this Shared alone (removed by Close). See Runtime.cacheDir.
	cacheDir, privateCache string
	closeOnce              sync.Once
}

// SharedConfig is how a Shared is set up: the Config fields of the same names, which a Runtime
// on a Shared takes from it (and must leave zero).
type SharedConfig struct {
	Logger        *slog.Logger
	CacheDir      string
	NoCache       bool
	Admission     Admission
	Engine        Engine
	WarmInstances int
	OnCompile     func(CompileEvent)
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
	sh.bytecode = codecache.New[string](codecache.Config[[]byte]{MaxBytes: maxBytecodeBytes})
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

// useShared checks that cfg leaves the shared parts to its Shared.
func (cfg *Config) useShared() error {
	switch {
	case cfg.CacheDir != "" || cfg.NoCache:
		return fmt.Errorf("runtime: Config.CacheDir and NoCache are the Shared's when Config.Shared is set (SharedConfig)")
	case cfg.Admission != Admission{}:
		return fmt.Errorf("runtime: Config.Admission is the Shared's when Config.Shared is set (SharedConfig.Admission)")
	case cfg.Engine != "" || cfg.WarmInstances != 0 || cfg.OnCompile != nil:
		return fmt.Errorf("runtime: Config.Engine, WarmInstances and OnCompile are the Shared's when Config.Shared is set (SharedConfig)")
	}
	return nil
}
