// Package runtime runs untrusted skills in WebAssembly sandboxes. It loads skill packages from
// directories, checks their manifests, compiles each module once, and runs each call in a fresh
// instance with exactly the capabilities its grant allows, within its limits.
//
// A program embeds it like this:
//
//	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{"./skills"}})
//	if err != nil { ... }
//	defer rt.Close(ctx)
//	res, err := rt.Run(ctx, "word-count", []byte(`{"text":"a b a"}`))
//
// No wazero or Extism type appears in this package's API, so either can change underneath.
package runtime

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// Config is how a Runtime is set up. The zero Config is valid and safe: no skill directories, the
// default (deny-all) policy, a discarded log, and the compilation cache under the user cache dir.
type Config struct {
	// SkillDirs are scanned in order; the first directory wins an id clash.
	SkillDirs []string
	// Policy caps every grant. Nil is the default policy: nothing but the default limits.
	Policy *Policy
	// Logger receives the runtime's own log (loads, reloads, broken skills, runs). Nil discards
	// it: a library should not write to a process's stderr unasked.
	Logger *slog.Logger
	// CacheDir holds wazero's compiled code between processes. It must be the current user's own
	// directory with mode 0700 (created so when missing), or New fails. Empty means
	// $XDG_CACHE_HOME/skillbox/wazero (or the OS's equivalent), under the same rule; when that
	// cannot be determined or is refused, the runtime logs a warning and runs without the cache.
	CacheDir string
	// NoCache turns the on-disk compilation cache off.
	NoCache bool
}

// Runtime holds the skill registry and the compiled modules. It is safe for concurrent use.
type Runtime struct {
	cfg    Config
	policy *Policy
	logger *slog.Logger
	engine *engine
	// cacheDir holds compiled code between processes ("" when NoCache). Every compiled module
	// gets its own wazero cache handle over it: a handle shares one in-memory engine between all
	// runtimes made with it, and that sharing raced when one runtime closed while another
	// compiled the same module during reloads (a run crashed in wazero). Separate handles share
	// only the files, which wazero writes atomically.
	cacheDir string

	reloadMu sync.Mutex
	reg      atomic.Pointer[registry]
	// scanned is the fingerprint of the skill files as of the last scan, for Watch.
	scanned atomic.Pointer[[32]byte]
	// generation counts scans, so callers can cache what they derive from Skills.
	generation atomic.Uint64
}

// Generation is a number that changes whenever the set of skills may have (New, Reload, Install,
// Remove): a cache of anything derived from Skills is valid while it stays the same.
func (rt *Runtime) Generation() uint64 { return rt.generation.Load() }

// rescan scans the skill directories, installs the result and lets the engine drop modules no
// version uses any more. Callers hold reloadMu (or are New).
func (rt *Runtime) rescan() *registry {
	fp := rt.fingerprint()
	r := scan(rt.cfg.SkillDirs, rt.policy, rt.logger)
	rt.reg.Store(r)
	rt.scanned.Store(&fp)
	rt.generation.Add(1)
	rt.engine.retain(r.hashes())
	return r
}

var (
	extismLogs sync.Once
	cacheMu    sync.Mutex
)

// newCache opens a wazero compilation cache handle over dir, or returns nil for "".
func newCache(dir string) (wazero.CompilationCache, error) {
	if dir == "" {
		return nil, nil
	}
	// wazero v1.12's first version lookup races when caches are made concurrently
	// (wazero#2532): make them one at a time.
	cacheMu.Lock()
	defer cacheMu.Unlock()
	return wazero.NewCompilationCacheWithDir(dir)
}

// New scans the skill directories and returns a ready Runtime. Broken skills do not make it fail:
// they are listed with their errors. It fails only when the host itself is unusable (an explicit
// Config.CacheDir that cannot be created or is not safe to use, see [CacheDirError]).
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	policy := cfg.Policy
	if policy == nil {
		policy = &Policy{}
	}
	rt := &Runtime{cfg: cfg, policy: policy, logger: logger}
	// Extism gates every plugin's log calls on one process-wide level, off by default. Runs capture
	// logs per instance (Plugin.SetLogger), so open the gate at info once; debug stays off because
	// Extism's own chatter is logged at debug.
	extismLogs.Do(func() { extism.SetLogLevel(extism.LogLevelInfo) })
	if !cfg.NoCache {
		dir, err := openCacheDir(ctx, cfg.CacheDir, logger) // cachedir.go: only a directory of ours, 0700
		if err != nil {
			return nil, err
		}
		rt.cacheDir = dir
	}
	rt.engine = newEngine(logger, rt.cacheDir)
	rt.rescan()
	if _, set := os.LookupEnv("EXTISM_ENABLE_WASI_OUTPUT"); set {
		// Extism then sends guests' stdout and stderr to the process's own, past the log budget.
		logger.Warn("EXTISM_ENABLE_WASI_OUTPUT is set: skill output bypasses the run's logs and limits; unset it")
	}
	logger.Info("skills loaded", "count", len(rt.reg.Load().order), "dirs", cfg.SkillDirs)
	return rt, nil
}

// Skills returns every skill, broken ones included, ordered by id.
func (rt *Runtime) Skills() []*Skill {
	return append([]*Skill(nil), rt.reg.Load().order...)
}

// Skill returns the skill with id, or an error matching ErrNotFound.
func (rt *Runtime) Skill(id string) (*Skill, error) {
	if s, ok := rt.reg.Load().byID[id]; ok {
		return s, nil
	}
	return nil, runErr(KindNotFound, id, nil, "no skill with this id")
}

// Policy returns the policy in force.
func (rt *Runtime) Policy() *Policy { return rt.policy }

// Reload rescans the skill directories. Runs in flight keep the versions they started with; new
// runs see the new scan.
func (rt *Runtime) Reload(ctx context.Context) error {
	rt.reloadMu.Lock()
	defer rt.reloadMu.Unlock()
	r := rt.rescan()
	rt.logger.Info("skills reloaded", "count", len(r.order))
	return ctx.Err()
}

// Stats are counters of the engine since New, for metrics.
type Stats struct {
	// CompileHits counts runs that found their module compiled in memory; Compiles counts
	// compilations (each of which may itself be served by the on-disk cache).
	CompileHits, Compiles int64
}

// Stats returns the engine's counters.
func (rt *Runtime) Stats() Stats {
	return Stats{CompileHits: rt.engine.hits.Load(), Compiles: rt.engine.compiles.Load()}
}

// Close releases compiled modules. Runs must have finished.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.engine.close(ctx)
	return nil
}
