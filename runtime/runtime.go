// Package runtime runs untrusted skills in WebAssembly sandboxes. It loads skill packages from
// directories, checks their manifests, compiles each module once, and runs each call in a fresh
// instance with exactly the capabilities its grant allows, within its limits.
//
// A program embeds it like this:
//
//	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{"./skills"}})
//	if err != nil { ... }
//	defer rt.Close(ctx)
//	res, err := rt.Run(ctx, run.Request{Skill: "word-count", Args: []byte(`{"text":"a b a"}`),
//		Who: access.Local("ops")}) // who asks: a runner at least
//
// Every run of every face (the library, the CLI, HTTP, MCP, the agent helpers) goes through one
// pipeline here: resolve and pin the skill's version, validate the arguments, admit the run
// (one bounded queue and one memory budget), run it, account for it, record it. Faces only
// translate requests and results.
//
// No wazero or Extism type appears in this package's API, so either can change underneath.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/internal/jsbundle"
	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/permits"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/runtime/internal/script"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/version"
	"go.opentelemetry.io/otel/trace"
)

// Config is how a Runtime is set up. The zero Config is valid and safe: no skill directories, the
// default (deny-all) policy, a discarded log, and the compilation cache under the user cache dir.
type Config struct {
	// SkillDirs are scanned in order; the first directory wins an id clash.
	SkillDirs []string
	// Policy caps every grant. Nil is the default policy: nothing but the default limits.
	Policy *policy.Policy
	// Logger receives the runtime's own log (loads, reloads, broken skills, runs). Nil discards
	// it: a library should not write to a process's stderr unasked.
	Logger *slog.Logger
	// PolicyFile, when set, is read for the policy (Policy must then be nil), and read again by
	// every Reload, so an operator changes the policy without a restart.
	PolicyFile string
	// MaxArgsBytes, when set, bounds one run's arguments in place of the policy's runs.maxArgsBytes
	// (an operator's flag: skillbox --max-args-bytes). See [Runtime.MaxArgsBytes].
	MaxArgsBytes int64
	// History bounds the records of recent runs kept in memory: see [History].
	History History
	// Recorder, when set, is told of every admitted run as it starts and as it ends, from every
	// face (see history.Recorder): a store keeps the history across restarts and replicas. Nil, the
	// default, keeps only the in-memory History.
	Recorder history.Recorder
	// Versions, when set, keeps every content of every skill as an immutable version, with its
	// status (draft, pending, active, ...), and decides which version runs: see version.Store,
	// Transitions and docs/versions.md. Nil, the default, runs whatever each skill directory
	// holds, as it is.
	Versions version.Store
	// Artifacts, when set, keeps the files runs leave in their output directory (see
	// OutputMount and artifact.Store): a store keeps them across restarts and replicas, within
	// its quota. Nil, the default, keeps the artifacts of recent runs in a temporary directory of
	// the runtime's own, bounded by KeptArtifacts and removed by Close.
	Artifacts artifact.Store
	// Permits, when set, keeps what people allow skills for a time (their answers to permission
	// requests, see Policy.Ask), so every replica of the tenant honours them: a store's tenant
	// view is one. Nil keeps them in memory, for this process alone.
	Permits permit.Store
	// KeptArtifacts bounds what the runtime keeps when Artifacts is nil: see [KeptArtifacts].
	KeptArtifacts KeptArtifacts
	// NoBackgroundCheck leaves unchecked skills (see StatusUnchecked) unchecked until they are
	// run, instead of checking them one at a time after each scan. A process that lists skills,
	// or runs one, and exits sets it: it would spend its life reading modules it never uses.
	NoBackgroundCheck bool
	// TracerProvider, when set, receives a span for every run ("execute_tool <skill>", with the
	// skill's version, digest, outcome, error kind and usage), a child of the span (or remote
	// span context) in the run's context, and a child span of it for every fetch the skill makes
	// (see docs/observability.md). Nil, the default, traces nothing and costs a run nothing.
	// The runtime never sets or reads the process-wide provider (otel.SetTracerProvider): an
	// embedder passes the one it means.
	TracerProvider trace.TracerProvider
	// Shared is the engine, interpreters, compilation cache and admission this Runtime runs on
	// (see [Shared] and [SharedConfig], which set them up), and may share with other Runtimes.
	// Nil gives the Runtime one of its own, made with the zero SharedConfig (the compilation
	// cache in the user's cache directory, the default admission) and closed with it.
	Shared *Shared
	// Under, when set, is a Runtime whose skills this one serves below its own SkillDirs (the
	// first directory still wins an id clash): Under's own Skills, loaded and checked once however
	// many Runtimes lie over it, granted under Under's policy, which this Runtime takes (Policy
	// and PolicyFile must then be unset). A server gives each tenant that shares the operator's
	// skills a Runtime over the operator's. Reload rescans this Runtime's own directories over
	// Under's skills as they are; Under's reloads rescan every Runtime over it. Close the
	// Runtimes over it before it.
	Under *Runtime
	// Tenant names the tenant this Runtime's skills and runs belong to (a server gives each
	// tenant its own Runtime on one Shared): it is in every Record, so a store keeps each
	// tenant's history apart, and in the messages of Quota's refusals. "" is no tenant.
	Tenant string
	// Quota bounds this Runtime's runs on top of the admission (see [Quota]); zero is none.
	Quota Quota
	// OnReload, when set, is told what each reload changed (Reload, SetPolicy, a change Watch
	// saw), after the new skills are in place: `skillbox serve --watch` logs it.
	OnReload func(Reloaded)
}

// Runtime holds the skill registry and the compiled modules. It is safe for concurrent use.
type Runtime struct {
	cfg    Config
	policy atomic.Pointer[policy.Policy]
	// permits holds the runs' permission requests, and lasting is where the allowances people
	// made for a time are kept: cfg.Permits, or a permit.Memory (permissions.go).
	permits   permits.Desk
	lasting   permit.Store
	logger    *slog.Logger
	engine    *engine.Engine
	interps   *engine.Interpreters // the script languages' interpreters
	bytecode  *script.Cache        // compiled JavaScript bundles and Python execute.py code
	admission *engine.Admission
	history   *recentRuns
	kept      *keeper // the artifacts of recent runs, without Config.Artifacts
	counters  *counters
	checks    *registry.Checks
	tracer    trace.Tracer // nil: tracing off
	// index is the file that keeps what checks learned for the next process ("": none).
	index string

	// closeMu orders Run's entry against Close: Run holds it for reading while it registers, so
	// Close, once it has it for writing, knows no new run will start.
	closeMu  sync.RWMutex
	closed   bool
	inflight sync.WaitGroup
	// runs holds the cancel of every run whose call is in flight, for Close to end them when it
	// runs out of patience (stopped is then set, and a call that starts later ends at once). A
	// set, not a context every run derives from: that costs each run a context and an AfterFunc.
	runsMu  sync.Mutex
	runs    map[*run.Result]context.CancelFunc
	stopped bool
	// cacheDir holds compiled code between processes ("" when NoCache). Every compiled module
	// gets its own wazero cache handle over it: a handle shares one in-memory engine between all
	// runtimes made with it, and that sharing raced when one runtime closed while another
	// compiled the same module during reloads (a run crashed in wazero). Separate handles share
	// only the files, which wazero writes atomically.
	cacheDir string
	// privateCache is a cache directory made for this Runtime's Shared (removed by its Close).
	privateCache string
	// shared holds engine, interps, bytecode, admission and the cache (see Shared); ownsShared
	// says this Runtime made it, and closes it. owner is this Runtime's live set in the engine
	// (the modules its registry uses, kept compiled; see engine.Owner).
	shared     *Shared
	ownsShared bool
	// closing is done when Close starts: this Runtime's runs still waiting in the Shared's
	// admission queue give up then (ErrClosed), while other Runtimes' runs there wait on.
	closing    context.Context
	startClose context.CancelFunc
	owner      *engine.Owner
	// quota holds the tenant's quotas (Config.Quota); nil when there are none.
	quota *quota

	reloadMu sync.Mutex
	reg      atomic.Pointer[registry.Set]
	// scanned is the fingerprint of the skill files as of the last scan, taken while polling > 0:
	// Watch's poller compares with it (see watch.go).
	scanned atomic.Pointer[[32]byte]
	polling atomic.Int32
	// watchMode is how Watch watches (watchNotifying, watchPolling), for tests; watchLimit, when
	// set, replaces maxWatches (tests make Watch fall back with it).
	watchMode  atomic.Int32
	watchLimit int
	// scanPolicy is the policy of the last scan: see registry.LinkLastGood.
	scanPolicy atomic.Pointer[policy.Policy]
	// generation counts scans, so callers can cache what they derive from Skills.
	generation atomic.Uint64
	// background checks unchecked skills after each scan (see background.go).
	background *background
	// singles are the skills Skill and Run loaded one by one before the first scan (see New);
	// indexOnce loads the index, at the first scan.
	singlesMu sync.Mutex
	singles   map[string]*registry.Skill
	indexOnce sync.Once
	// following is closed when the goroutine that keeps versions' catalog current ends (nil
	// without one).
	following chan struct{}
	// versions is the view of Config.Versions (nil without it).
	versions *versions
	// installs is set when this tenant's installs are shared with other replicas (ShareInstalls).
	installs atomic.Pointer[sharedInstalls]

	// users are the views of users of this tenant (see User), made when first asked for; over
	// are the Runtimes made over this one (Config.Under, see under.go).
	usersMu sync.Mutex
	users   map[string]*Runtime
	over    []*Runtime
	// parent, user and userDir are set in a user's Runtime: the tenant's Runtime it came from,
	// the user, and the directory of the user's own skills.
	parent  *Runtime
	user    string
	userDir string
}

// registry returns the registry, scanning the skill directories first if no scan was made yet.
func (rt *Runtime) registry() *registry.Set {
	if r := rt.reg.Load(); r != nil {
		return r
	}
	rt.reloadMu.Lock()
	defer rt.reloadMu.Unlock()
	return rt.registryLocked()
}

// registryLocked is registry for a caller holding reloadMu.
func (rt *Runtime) registryLocked() *registry.Set {
	if r := rt.reg.Load(); r != nil {
		return r
	}
	r := rt.rescan()
	rt.logger.Info("skills loaded", "count", len(r.Order), "dirs", rt.cfg.SkillDirs)
	return r
}

// lookup finds skill id: in the registry once there is one, else by loading its directory from
// the first skill directory that has it as a package, as a scan would.
func (rt *Runtime) lookup(id string) (*registry.Skill, bool) {
	if r := rt.reg.Load(); r != nil {
		s, ok := r.ByID[id]
		return s, ok
	}
	// Only a plain directory name: an id comes from callers, and is joined to a path.
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") || strings.ContainsAny(id, `/\`) {
		return nil, false
	}
	s, ok, scan := rt.lookupAlone(id)
	if !scan {
		return s, ok
	}
	s, ok = rt.registry().ByID[id]
	return s, ok
}

// lookupAlone is lookup before the first scan: it loads id's directory alone. scan is true when
// only a scan can tell: a directory whose name is no id may make id (see Skill.ID), or id's own
// directory makes another.
func (rt *Runtime) lookupAlone(id string) (s *registry.Skill, ok, scan bool) {
	rt.singlesMu.Lock()
	defer rt.singlesMu.Unlock()
	if r := rt.reg.Load(); r != nil { // a scan landed meanwhile
		s, ok := r.ByID[id]
		return s, ok, false
	}
	if s, ok := rt.singles[id]; ok {
		return s, true, false
	}
	for _, root := range rt.ownDirs() { // the skills below are the Runtime's below (below)
		dir := filepath.Join(root, id)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			if s, ok := registry.Load(dir, rt.policy.Load(), rt.checks); ok {
				if s.ID() != id {
					return nil, false, true
				}
				// A directory named by the id keeps it in its skills directory (registry.ResolveIDs).
				s.Adopt()
				rt.logger.Debug("skill loaded alone, before any scan", "skill", id, "dir", dir)
				if rt.singles == nil {
					rt.singles = map[string]*registry.Skill{}
				}
				rt.singles[id] = s
				return s, true, false
			}
		}
		if mayDerive(root, id) {
			return nil, false, true
		}
	}
	if b := rt.below(); b != nil {
		s, ok := b.lookup(id)
		return s, ok, false
	}
	return nil, false, false
}

// mayDerive reports whether the skills directory root holds a directory, other than one named
// id, whose name makes id (see Skill.ID).
func mayDerive(root, id string) bool {
	if !spec.ValidID(id) {
		return false
	}
	subs, _ := registry.PackageCandidates(root)
	for _, sub := range subs {
		if name := filepath.Base(sub); name != id && !spec.ValidID(name) && registry.DerivedID(name) == id {
			return true
		}
	}
	return false
}

// Generation is a number that changes whenever the set of usable skills may have (New, Reload,
// Install, Remove, and a check that found a skill broken): a cache of anything derived from
// Skills is valid while it stays the same.
func (rt *Runtime) Generation() uint64 { return rt.generation.Load() }

// rescan scans the skill directories, installs the result and lets the engine drop modules no
// version uses any more. Callers hold reloadMu (or are New).
func (rt *Runtime) rescan() *registry.Set {
	var fp *[32]byte
	if rt.polling.Load() > 0 { // a stat of every file: only for a poller to compare with
		f := rt.fingerprint()
		fp = &f
	}
	rt.indexOnce.Do(rt.loadIndex) // a scan adopts what the index knows
	// A user's view, or a Runtime over another (see under.go): its own directories over the
	// registry below as it is now, which rescans those over it after each of its own scans.
	pol := rt.policy.Load()
	r := registry.Scan(rt.ownDirs(), pol, rt.checks, rt.logger)
	if b := rt.below(); b != nil {
		r = registry.Overlay(r, b.reg.Load())
	}
	if rt.scanPolicy.Swap(pol) == pol {
		// A skill whose new version turns out broken goes on serving the one before, under the
		// same policy; a new policy grants anew, and keeps no old grant serving. Before the
		// first scan, the one before is the one a run loaded alone.
		prev := rt.reg.Load()
		if prev == nil {
			rt.singlesMu.Lock()
			prev = &registry.Set{ByID: maps.Clone(rt.singles)}
			rt.singlesMu.Unlock()
		}
		registry.LinkLastGood(r, prev)
	}
	old := rt.reg.Swap(r)
	rt.singlesMu.Lock()
	rt.singles = nil // the registry answers from now on
	rt.singlesMu.Unlock()
	rt.scanned.Store(fp)
	rt.generation.Add(1)
	keep, unchecked := r.Hashes()
	registry.LastGoodHashes(r, keep)
	if unchecked {
		// An unchecked skill may be one whose module is compiled: keep what is kept until the
		// background check (or a run) tells its hash.
		for h := range rt.engine.LiveHashes(rt.owner) {
			keep[h] = true
		}
	}
	rt.engine.Retain(rt.owner, keep)
	rt.background.wake()
	if old != nil {
		rt.reloaded(diffRegistries(old, r))
	}
	rt.rescanAbove() // their registries hold this one's skills
	return r
}

// reloaded logs what a reload changed and tells Config.OnReload.
func (rt *Runtime) reloaded(d Reloaded) {
	rt.logger.Info("skills reloaded", "count", d.Count, "added", d.Added, "changed", d.Changed, "removed", d.Removed)
	for _, b := range d.Broken {
		rt.logger.Warn("reloaded skill is broken", "skill", b.ID, "err", b.Reason)
	}
	if rt.cfg.OnReload != nil {
		rt.cfg.OnReload(d)
	}
}

// onCheck is told of every check of a skill of this runtime (see registry.Checks): a skill of the current
// registry found broken changes what callers may offer, and a checked module's hash is one the
// engine keeps compiled.
func (rt *Runtime) onCheck(s *registry.Skill, v *registry.Verdict) {
	if r := rt.reg.Load(); r == nil || r.ByID[s.ID()] != s {
		return // loaded alone before a scan, or a version a reload replaced: no one lists it
	}
	if v.Status == catalog.StatusError {
		rt.generation.Add(1)
		rt.logger.Warn("skill is broken", "skill", s.ID(), "err", v.Err)
	}
	if v.Hash != "" {
		rt.engine.KeepLive(rt.owner, v.Hash)
	}
}

var extismLogs sync.Once

// New returns a ready Runtime. Broken skills do not make it fail: they are listed with their
// errors. It fails when the host itself is unusable (an explicit Config.CacheDir that cannot be
// created or is not safe to use, see [CacheDirError]) or the policy file is broken.
//
// # Notes
//
// New reads no skill. The skill directories are scanned when something needs them all — Skills,
// Reload, SetPolicy, Install, Remove, Watch — and until then Skill and Run load the one skill
// they name, from the first skill directory that has it (as a scan would pick it): a process that
// runs one skill out of ten thousand and exits reads one skill.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxArgsBytes < 0 || cfg.MaxArgsBytes > policy.MaxArgsBytesCeiling {
		return nil, fmt.Errorf("runtime: Config.MaxArgsBytes %d: give 1 to %d bytes, or 0 for the policy's", cfg.MaxArgsBytes, policy.MaxArgsBytesCeiling)
	}
	if cfg.PolicyFile != "" && cfg.Policy != nil {
		return nil, errors.New("runtime: set Config.Policy or Config.PolicyFile, not both")
	}
	if err := cfg.checkUnder(); err != nil {
		return nil, err
	}
	sh, owned := cfg.Shared, false
	if sh == nil {
		var err error
		if sh, err = NewShared(ctx, SharedConfig{Logger: logger}); err != nil {
			return nil, err
		}
		owned = true
	}
	fail := func(err error) (*Runtime, error) {
		if owned {
			_ = sh.Close(ctx)
		}
		return nil, err
	}
	if err := cfg.Quota.check(); err != nil {
		return fail(err)
	}
	cfg.History = cfg.History.withDefaults()
	rt := &Runtime{cfg: cfg, lasting: cfg.Permits, logger: logger, history: newRecentRuns(cfg.History), kept: newKeeper(cfg.KeptArtifacts), counters: newCounters(), checks: &registry.Checks{Digests: registry.NewDigester(), Bundles: jsbundle.NewCache(0)}}
	rt.checks.OnCheck = rt.onCheck
	if rt.lasting == nil {
		rt.lasting = &permit.Memory{}
	}
	rt.tracer = newTracer(cfg.TracerProvider)
	rt.runs = map[*run.Result]context.CancelFunc{}
	rt.quota = newQuota(cfg.Tenant, cfg.Quota)
	pol := cfg.Policy
	if cfg.PolicyFile != "" {
		p, err := policy.Load(cfg.PolicyFile)
		if err != nil {
			return fail(err)
		}
		pol = p
	}
	// The runtime keeps its own copy: a caller changing its Policy afterwards must not change what
	// skills are granted behind the runtime's back.
	rt.policy.Store(pol.Clone())
	rt.scanPolicy.Store(rt.policy.Load()) // what a skill loaded before the first scan was granted under
	// Extism gates every plugin's log calls on one process-wide level, off by default. Runs capture
	// logs per instance (Plugin.SetLogger), so open the gate at info once; debug stays off because
	// Extism's own chatter is logged at debug.
	extismLogs.Do(func() { extism.SetLogLevel(extism.LogLevelInfo) })
	rt.shared, rt.ownsShared = sh, owned
	rt.closing, rt.startClose = context.WithCancel(context.Background())
	rt.cacheDir, rt.privateCache = sh.cacheDir, sh.privateCache
	rt.engine, rt.interps, rt.bytecode, rt.admission = sh.engine, sh.interps, sh.bytecode, sh.admission
	if cfg.Versions != nil {
		// Stored versions are unpacked here to run: this Runtime's own, 0700, gone at Close.
		dir, err := os.MkdirTemp("", "skillbox-versions-")
		if err != nil {
			return fail(fmt.Errorf("runtime: a directory for skill versions: %w", err))
		}
		rt.versions = &versions{store: cfg.Versions, lists: map[string]versionList{}, dir: dir}
		if feed, ok := cfg.Versions.(version.Feed); ok {
			// Every version in memory before the first run, then kept current: a run never
			// reads the store. A store that cannot be read now is read by the runs that need
			// it until the catalog can read it.
			rt.versions.cat = newVersionCatalog(feed, logger)
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_ = rt.versions.cat.refresh(rctx)
			cancel()
			rt.following = make(chan struct{})
			go func() {
				defer close(rt.following)
				rt.versions.cat.follow(rt.closing)
			}()
		}
	}
	rt.owner = rt.engine.Join()
	if rt.privateCache == "" {
		rt.index = rt.openIndex() // index.go: beside the compilation cache, under the same rules
	}
	rt.background = newBackground(rt, !cfg.NoBackgroundCheck)
	if cfg.Under != nil {
		rt.lieOver(cfg.Under)
	}
	if _, set := os.LookupEnv("EXTISM_ENABLE_WASI_OUTPUT"); set {
		// Extism then sends guests' stdout and stderr to the process's own, past the log budget.
		logger.Warn("EXTISM_ENABLE_WASI_OUTPUT is set: skill output bypasses the run's logs and limits; unset it")
	}
	return rt, nil
}

// Skills returns every skill, broken ones included, ordered by id. The first call scans the
// skill directories (see New).
func (rt *Runtime) Skills() []*Skill {
	return views(rt.registry().Order)
}

// Skill returns the skill with id, or an error matching ErrNotFound. Before the first scan it
// loads that skill's directory alone (see New).
func (rt *Runtime) Skill(id string) (*Skill, error) {
	if s, ok := rt.lookup(id); ok {
		return view(s), nil
	}
	return nil, rt.missing(id)
}

// MaxArgsBytes is the largest arguments document a run takes, in bytes: Config.MaxArgsBytes, or
// the policy's runs.maxArgsBytes (4 MiB by default). Run refuses larger arguments (invalid_args);
// every face reads a request within this bound (plus its own envelope), so none takes what the
// runtime refuses, nor holds more than it in memory. A reload of the policy changes it.
func (rt *Runtime) MaxArgsBytes() int64 {
	if rt.cfg.MaxArgsBytes > 0 {
		return rt.cfg.MaxArgsBytes
	}
	return rt.policy.Load().Runs.ArgsBytes()
}

// Reload reads the policy file again (when Config.PolicyFile is set) and rescans the skill
// directories. Runs in flight keep the versions and grants they started with; new runs see the
// new ones. A broken policy file changes nothing: the error (a *policy.Error) says why.
func (rt *Runtime) Reload(ctx context.Context) error {
	if rt.parent != nil { // a user's view: its tenant's reload rescans it too
		return rt.parent.Reload(ctx)
	}
	if rt.cfg.PolicyFile != "" {
		p, err := policy.Load(rt.cfg.PolicyFile)
		if err != nil {
			return err
		}
		return rt.SetPolicy(ctx, p)
	}
	rt.reloadMu.Lock()
	defer rt.reloadMu.Unlock()
	rt.rescan()
	return ctx.Err()
}

// SetPolicy replaces the policy (nil: the default, deny-all policy) and recomputes every skill's
// grant. Runs in flight keep the grant they started with.
func (rt *Runtime) SetPolicy(ctx context.Context, p *policy.Policy) error {
	if rt.parent != nil { // a user's Runtime has its tenant's policy
		return rt.parent.SetPolicy(ctx, p)
	}
	if rt.cfg.Under != nil {
		return errors.New("runtime: this Runtime takes its policy from Config.Under: set the policy there")
	}
	rt.reloadMu.Lock()
	defer rt.reloadMu.Unlock()
	rt.policy.Store(p.Clone())
	rt.rescan()
	rt.logger.Info("policy replaced")
	return ctx.Err()
}

// AdmissionStats is Stats().Admission alone, without copying the counters: for what asks often
// whether there is room (a node of a cluster, before it takes a queued run).
func (rt *Runtime) AdmissionStats() AdmissionStats { return AdmissionStats(rt.admission.Stats()) }

// Stats returns the runtime's counters.
func (rt *Runtime) Stats() Stats {
	e := rt.engine.Stats()
	s := Stats{Checks: rt.checks.Made.Load(), ModuleReads: rt.checks.Reads.Load(),
		CompileHits: e.CompileHits, Compiles: e.Compiles, Evictions: e.Evictions, ChildCompiles: e.ChildCompiles,
		WarmHits: e.WarmHits, WarmMade: e.WarmMade, WarmRefillNs: e.WarmRefillNs,
		WarmModules: e.WarmModules, Admission: rt.AdmissionStats()}
	s.Interpreters, s.InterpreterCompiles, s.InterpreterEvictions = rt.interps.Stats()
	rt.counters.snapshot(&s)
	return s
}

// RunRecord returns the record of a recent run (see [History]) as who may see it, or false when
// it is not kept or who may not see it (a user's own run is that user's and the admins': see
// access.Principal.Sees). A library's own caller is its operator: access.Principal with RoleAdmin.
func (rt *Runtime) RunRecord(who access.Principal, runID string) (history.Record, bool) {
	r, ok := rt.history.get(runID)
	if !ok || !who.Sees(r.VisibleTo) {
		return history.Record{}, false
	}
	c := *r
	res := *r.Result
	c.Result = &res
	return c, true
}

// closeView closes a user's view (see newUserView): its runs, as Close does, and what its
// registry kept compiled; its tenant forgets it. What it shares with the tenant stays.
func (rt *Runtime) closeView(ctx context.Context) error {
	rt.closeMu.Lock()
	rt.closed = true
	rt.closeMu.Unlock()
	p := rt.parent
	p.usersMu.Lock()
	if p.users[rt.user] == rt {
		delete(p.users, rt.user)
	}
	p.usersMu.Unlock()
	rt.startClose()
	err := rt.endRuns(ctx)
	rt.engine.Leave(rt.owner)
	return err
}

// endRuns waits for the runs in flight to finish; if ctx ends first, it stops them (kind
// canceled), waits for them, and returns ctx's error. Every call that starts later ends at once.
func (rt *Runtime) endRuns(ctx context.Context) error {
	done := make(chan struct{})
	go func() { rt.inflight.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("runtime close: %w", ctx.Err())
		rt.stopRuns()
		<-done // a stopped run returns promptly: the guest is interrupted, host calls see the context
	}
	rt.stopRuns()
	return err
}

// Close stops admitting runs (Run then fails with ErrClosed, and runs waiting in the queue are
// refused with it), waits for the runs in flight to finish, and releases every compiled module.
// If ctx ends first, the runs still in flight are stopped (kind canceled) and waited for, and
// Close returns ctx's error. Close is safe to call more than once.
func (rt *Runtime) Close(ctx context.Context) error {
	if rt.parent != nil {
		return rt.closeView(ctx)
	}
	rt.closeMu.Lock()
	rt.closed = true
	rt.closeMu.Unlock()
	usersErr := rt.closeUsers(ctx)
	rt.leaveUnder()
	rt.startClose() // refuses this Runtime's runs waiting in the admission queue
	if rt.following != nil {
		<-rt.following
	}
	if sh := rt.installs.Load(); sh != nil {
		sh.done.Wait()
	}
	rt.background.stop()
	rt.saveIndex()
	err := rt.endRuns(ctx)
	rt.kept.close()
	if rt.ownsShared {
		_ = rt.shared.Close(context.Background())
	} else {
		rt.engine.Leave(rt.owner) // the modules only this Runtime kept
	}
	if rt.versions != nil && rt.versions.dir != "" {
		_ = os.RemoveAll(rt.versions.dir)
	}
	return errors.Join(err, usersErr)
}

// track registers the cancel of res's call for Close; it returns false, and the caller must end
// the call, when Close has stopped the runs already.
func (rt *Runtime) track(res *run.Result, cancel context.CancelFunc) bool {
	rt.runsMu.Lock()
	defer rt.runsMu.Unlock()
	if rt.stopped {
		return false
	}
	rt.runs[res] = cancel
	return true
}

func (rt *Runtime) untrack(res *run.Result) {
	rt.runsMu.Lock()
	delete(rt.runs, res)
	rt.runsMu.Unlock()
}

// stopRuns ends every call in flight, and every call that starts from now on.
func (rt *Runtime) stopRuns() {
	rt.runsMu.Lock()
	rt.stopped = true
	for _, cancel := range rt.runs {
		cancel()
	}
	rt.runsMu.Unlock()
}

// runsStopped reports whether Close has ended the runs in flight.
func (rt *Runtime) runsStopped() bool {
	rt.runsMu.Lock()
	defer rt.runsMu.Unlock()
	return rt.stopped
}
