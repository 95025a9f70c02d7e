package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/diskfull"
	"github.com/skillbox-dev/skillbox/internal/extismhost"
	"github.com/skillbox-dev/skillbox/internal/kernel"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/codecache"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/runtime/internal/script"
	"github.com/skillbox-dev/skillbox/spec"
)

// Run runs req.Skill with req.Args in a fresh instance and returns its Result, which is never
// nil. The error is nil when the run succeeded, and otherwise a *run.Error whose Kind is also in
// Result.Error.
//
// Every face runs skills through here, in one pipeline:
//
//  1. resolve: the skill's current version is pinned for the whole run, whatever a concurrent
//     Reload or Install does (not_found for no such skill, an instruction-only or broken one);
//  2. validate: the arguments against the skill's schema, defaults applied (invalid_args);
//  3. compile the module if it is not yet, itself admitted: at most Admission.MaxCompiles at
//     once, its memory charged to the budget;
//  4. admit: a run slot and the run's memory charge (see engine.RunCharge), waiting in the queue
//     up to Admission.MaxWait (busy when the queue is full or the wait too long; ErrClosed after
//     Close);
//  5. run, bounded by the skill's granted timeout and by ctx, whichever ends first;
//  6. account (Stats, every request, refused ones too) and record (RunRecord, admitted runs).
//
// Events (req.OnEvent) are sent only for admitted runs.
func (rt *Runtime) Run(ctx context.Context, req run.Request) (*run.Result, error) {
	start := time.Now()
	if t := bytes.TrimSpace(req.Args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		// No arguments, or "args": null, is {}: decided here, once, for every face, so the
		// schema, the record and its hash all see the same document.
		req.Args = json.RawMessage("{}")
	}
	res := &run.Result{RunID: req.ID, Skill: req.Skill, Logs: []run.LogEntry{}}
	if res.RunID == "" {
		res.RunID = newRunID()
	}
	face := req.Face
	if face == "" {
		face = run.FaceLibrary
	}
	skillLabel := "" // known skills only: a metric label must not come from a client's typo
	admitted := false
	maxMessage := int64(maxMessageBytes)
	ctx, span := rt.startRun(ctx, req.Skill, req.TraceParent)
	res.TraceID = traceID(ctx)
	var begun *history.Record // the start as the recorder got it: its end keeps the same arguments
	var visibleTo string
	finish := func(err *run.Error) (*run.Result, error) {
		res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			err.Skill = req.Skill
			// A message can carry what the guest chose (an Extism error, a trap's text): it is
			// held to what the run may output, like any other output of the guest.
			err.Message = capText(err.Message, maxMessage)
			res.Success, res.Result = false, nil
			res.Error = &run.ResultError{Kind: err.Kind, Message: err.Message}
		}
		res.Settle()
		metricLabel := skillLabel
		if visibleTo != "" { // a user's own skill: its id is not the tenant's to read in metrics
			metricLabel = privateSkillLabel
		}
		rt.counters.observe(metricLabel, face, res, admitted)
		endRun(span, res, face, req.Who.Caller(), admitted, skillLabel != "")
		if admitted {
			// Guarded: the attributes cost allocations even when the handler drops the record.
			if rt.logger.Enabled(context.Background(), slog.LevelInfo) {
				msg := "run ok"
				if err != nil {
					msg = "run failed"
				}
				rt.logger.Info(msg, "skill", req.Skill, "run", res.RunID, "face", face, "caller", req.Who.Caller(),
					"kind", errKind(err), "ms", res.DurationMs, "trace", traceID(ctx))
			}
			rec := &history.Record{Result: res, Face: face, Caller: req.Who.Caller(), Tenant: rt.cfg.Tenant, VisibleTo: visibleTo, StartedAt: start}
			if begun != nil {
				rec.Args, rec.ArgsSHA256 = begun.Args, begun.ArgsSHA256 // hashed once per run
			} else {
				recordArgs(rec, req, rt.policy.Load().Runs.RecordArguments)
			}
			rt.recordEnd(ctx, rec)
			if req.OnEvent != nil {
				req.OnEvent(run.Event{Type: "result", RunID: res.RunID, Result: res})
			}
		}
		if err != nil {
			return res, err
		}
		return res, nil
	}

	// Registering with the in-flight runs and checking for Close is one step, so Close never
	// misses a run that got past the check.
	rt.closeMu.RLock()
	if rt.closed {
		rt.closeMu.RUnlock()
		return finish(run.Errorf(run.KindBusy, req.Skill, run.ErrClosed, "the runtime is closed"))
	}
	rt.inflight.Add(1)
	rt.closeMu.RUnlock()
	defer rt.inflight.Done()

	if err := req.Who.Require(access.NeedRun, "running", req.Skill); err != nil {
		return finish(run.Errorf(run.KindPermissionDenied, req.Skill, err, "%v", err))
	}
	if req.ID != "" && !run.ValidID(req.ID) {
		res.RunID = newRunID() // not an id a record may carry
		return finish(run.Errorf(run.KindInvalidArgs, req.Skill, nil, "the run's id %q is not one the runtime makes (run_ and 24 lowercase hex digits): leave Request.ID empty", req.ID))
	}

	n := int64(max(len(req.Args), len(req.Stdin)))
	for i, a := range req.Argv {
		n += int64(len(a))
		if strings.IndexByte(a, 0) >= 0 {
			return finish(run.Errorf(run.KindInvalidArgs, req.Skill, nil,
				"argument %d of the program's command line holds a NUL byte, which no command line carries: send text", i+1))
		}
	}
	if limit := rt.MaxArgsBytes(); n > limit {
		return finish(run.Errorf(run.KindInvalidArgs, req.Skill, nil,
			"the arguments are %d bytes, more than the %d allowed (the policy's runs.maxArgsBytes): send smaller arguments", n, limit))
	}
	var p prepared
	defer rt.release(&p)
	seen := rt.changes()
	rerr := rt.prepare(ctx, &req, &p)
	for retry := 0; rerr != nil && errors.Is(rerr, run.ErrModuleChanged) && retry < maxChangedRetries; retry++ {
		// The skill changed on disk since it was loaded: load what is there now and run that (a
		// skill rewritten while it serves switches; it never answers not found).
		rt.release(&p)
		rt.reloadChanged(seen)
		seen = rt.changes()
		rerr = rt.prepare(ctx, &req, &p)
	}
	if p.visibleTo != "" {
		visibleTo = p.visibleTo
	}
	if p.s != nil {
		skillLabel = p.s.ID()
		res.Version, res.Digest = p.s.Version(), p.s.State().Digest
	}
	if p.grant != nil {
		// At least 1 KiB: the host's own words about a run must survive a tiny maxOutputBytes.
		maxMessage = min(maxMessage, max(p.grant.Limits.MaxOutputBytes, minMessageBytes))
	}
	if rerr != nil {
		return finish(rerr)
	}
	s, job, grant, input, c, charge := p.s, p.job, p.grant, p.input, p.c, p.charge
	var err error
	ticket, err := rt.admit(ctx, charge, req.NoWait, req.Yield)
	if err != nil {
		return finish(admissionError(s, err))
	}
	defer rt.admission.Release(ticket)
	admitted = true
	if job != nil {
		job.Admission, job.Ticket = rt.admission, ticket // a program's subprocesses grow its charge
	}
	if rt.cfg.Recorder != nil {
		begun = &history.Record{Result: &run.Result{RunID: res.RunID, Skill: res.Skill, Version: res.Version, Digest: res.Digest, TraceID: res.TraceID},
			Face: face, Caller: req.Who.Caller(), Tenant: rt.cfg.Tenant, VisibleTo: visibleTo, StartedAt: start}
		recordArgs(begun, req, rt.policy.Load().Runs.RecordArguments)
		if err := rt.cfg.Recorder.BeginRun(ctx, begun); err != nil {
			rt.logger.Error("record the run's start", "skill", req.Skill, "run", res.RunID, "err", err)
		}
	}

	var emit emitter // nil without a listener: no closure, and no log events made
	if on := req.OnEvent; on != nil {
		emit = func(e run.Event) { // capturing on, not req: req would move to the heap
			e.RunID = res.RunID
			on(e)
		}
	}
	emit.send(run.Event{Type: "status", Status: "started"})
	rerr = rt.execute(ctx, s, grant, c, job, input, res, emit, rt.newAsking(s, &req, res, emit))
	if rerr != nil && rerr.Kind == run.KindCanceled && rt.runsStopped() {
		rerr.Message = "the runtime was closed while the run was in flight"
	}
	return finish(rerr)
}

// maxMessageBytes bounds a run's error message, whatever the skill may output; a message may
// always have minMessageBytes.
const (
	maxMessageBytes = 64 << 10
	minMessageBytes = 1 << 10
)

// capText cuts s to at most max bytes, on a UTF-8 boundary, saying how much it cut.
func capText(s string, max int64) string {
	if int64(len(s)) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … (%d more bytes cut)", s[:cut], int64(len(s))-cut)
}

func errKind(err *run.Error) run.ErrorKind {
	if err == nil {
		return ""
	}
	return err.Kind
}

// resolve pins the current version of skill id, if it can run (an instruction skill can, when a
// program of it is asked for): checked (see Skill), on its first
// run, before anything is charged for it.
func (rt *Runtime) resolve(ctx context.Context, id string, program bool) (*registry.Skill, *run.Error) {
	s, ok := rt.lookup(id)
	if !ok && rt.catchUp(ctx, id) { // installed on another replica, not yet told here
		s, ok = rt.lookup(id)
	}
	switch {
	case !ok:
		return nil, rt.missing(id)
	case s.Kind() != spec.Executable && !program:
		return nil, (&NotFoundError{ID: id, Absent: InstructionsOnly}).runError()
	}
	if rerr := runnable(ctx, s); rerr != nil {
		good := s.LastGood()
		if good == nil || !errors.Is(rerr, run.ErrBroken) {
			return nil, rerr
		}
		// A new version that is broken, or changed again before it was checked: the last good
		// one goes on serving (until the next reload brings a sound one); broken is logged.
		if !errors.Is(rerr, run.ErrModuleChanged) && s.ReportFallback() {
			rt.logger.Error("the new version of a skill is broken: the version before it serves until it is fixed",
				"skill", id, "err", rerr.Message)
		}
		return good, nil
	}
	return s, nil
}

// prepared is what a run holds from its preparation to its end: its skill's version (s, set
// once picked) and code, its grant, its input, its compiled module or interpreter and their
// charge, its share of the tenant's quota. visibleTo is whose the skill's place says it is.
type prepared struct {
	s         *registry.Skill
	visibleTo string
	job       *script.Job // a script's run (execute.js, a program), nil for a module's
	grant     *policy.Grant
	input     []byte
	c         *engine.Compiled
	charge    int64
	quota     func()
	module    *codecache.Entry[*engine.Compiled]
	interp    *codecache.Entry[*engine.Interp]
}

// prepare makes p what a run of req holds: it resolves and picks the skill's version, makes its
// job, validates its arguments, takes its quota and acquires its module or interpreter. What it
// took before failing is in p, for release.
func (rt *Runtime) prepare(ctx context.Context, req *run.Request, p *prepared) *run.Error {
	s, rerr := rt.resolve(ctx, req.Skill, req.Script != "")
	if rerr != nil {
		return rerr
	}
	p.visibleTo = rt.visibleTo(s) // the current version's place says whose it is
	if s, rerr = rt.pickVersion(ctx, s, req.Digest, req.Who); rerr != nil {
		return rerr
	}
	p.s = s
	if req.Script != "" {
		p.job, rerr = script.ProgramJob(ctx, s, *req)
	} else if s.Lang().Script() {
		var err error
		if p.job, err = script.ExecuteJob(ctx, s); err != nil {
			rerr = codeError(s, err)
		}
	}
	if rerr != nil {
		return rerr
	}
	p.grant = s.Grant()
	if p.job != nil {
		p.grant = p.job.Grant
	}
	if p.job == nil || p.job.Prog == nil {
		if p.input, rerr = rt.validate(s, *req); rerr != nil {
			return rerr
		}
	}
	// The tenant's quota, before anything is compiled or waits for admission: a tenant past it
	// costs the host nothing more.
	if p.quota, rerr = rt.quota.take(ctx, s.ID(), time.Now()); rerr != nil {
		return rerr
	}
	if p.job != nil {
		en, err := rt.interps.Acquire(ctx, p.job.Lang, p.grant.Limits.MemoryMiB)
		if err != nil {
			return acquireError(s, err)
		}
		p.interp, p.job.Interp = en, en.Value()
		p.charge = script.Charge(p.grant, int64(len(p.job.Code)))
		return nil
	}
	m := engineModule(s)
	en, err := rt.engine.Acquire(ctx, &m)
	if err != nil {
		return acquireError(s, err)
	}
	p.module, p.c = en, en.Value()
	p.charge = engine.RunCharge(&m, p.c)
	return nil
}

// release lets go of what p holds, and empties it for another prepare.
func (rt *Runtime) release(p *prepared) {
	if p.interp != nil {
		rt.interps.Release(p.interp)
	}
	if p.module != nil {
		rt.engine.Release(p.module)
	}
	if p.quota != nil {
		p.quota()
	}
	*p = prepared{}
}

// maxChangedRetries bounds the reloads one run makes when it finds its skill changed on disk
// since it was loaded, under a skill rewritten faster than it is checked.
const maxChangedRetries = 3

// runnable checks s (a check's verdict is kept: once per version) and returns the refusal of a
// run of it when it is broken, or its check could not be admitted.
func runnable(ctx context.Context, s *registry.Skill) *run.Error {
	v, err := s.Check(ctx)
	if err != nil {
		return admissionError(s, err)
	}
	if v.Status != catalog.StatusActive {
		e := brokenErr(s, v.Err)
		if v.Changed { // not broken: another version is on disk now
			e.Err = errors.Join(e.Err, run.ErrModuleChanged)
		}
		return e
	}
	return nil
}

// validate checks the request against s and returns the module's input.
func (rt *Runtime) validate(s *registry.Skill, req run.Request) ([]byte, *run.Error) {
	if len(req.Argv) > 0 || req.Stdin != nil {
		return nil, run.Errorf(run.KindInvalidArgs, s.ID(), nil, "skill %q takes JSON arguments only, not a command line or standard input", s.ID())
	}
	input, err := s.Schema().Prepare(req.Args)
	if err != nil {
		return nil, err.(*run.Error)
	}
	// The input is copied into the module's memory; Extism drops an input that does not fit
	// without a word, so refuse one that cannot.
	if memBytes := s.Grant().Limits.MemoryMiB << 20; int64(len(input)) > memBytes/2 {
		return nil, run.Errorf(run.KindInvalidArgs, s.ID(), nil, "arguments of %d bytes are more than half the skill's memory limit (%d MiB)", len(input), s.Grant().Limits.MemoryMiB)
	}
	return input, nil
}

// admit waits for the admission of a run charged charge, until ctx ends or this Runtime closes:
// a closing Runtime refuses its queued runs (run.ErrClosed) even when the queue is a Shared's
// that other Runtimes go on using.
func (rt *Runtime) admit(ctx context.Context, charge int64, noWait, yield bool) (*engine.Ticket, error) {
	if noWait {
		if err := ctx.Err(); err != nil { // a run that will not wait is not admitted once canceled
			return nil, err
		}
		if yield {
			return nil, &engine.BusyError{Msg: "runs that came before it wait in the cluster's queue: it joins them", Cause: run.ErrNoRoomNow}
		}
		return rt.admission.TryAcquire(charge, true)
	}
	return rt.admission.AcquireUntil(ctx, charge, true, rt.closing.Done())
}

// acquireError names the kind of a failed compilation (or of its admission).
func acquireError(s *registry.Skill, err error) *run.Error {
	err = fromEngine(err)
	var be *engine.BusyError
	var ce *CompileError
	switch {
	case errors.As(err, &ce) && ce.Bound == "compileMemory":
		return run.Errorf(run.KindMemoryLimit, s.ID(), err, "the module cannot be compiled: %s", ce.Msg)
	case errors.As(err, &ce) && ce.Bound == "compileTimeout":
		return run.Errorf(run.KindTimeout, s.ID(), err, "the module cannot be compiled: %s", ce.Msg)
	case errors.Is(err, run.ErrModuleChanged):
		return run.Errorf(run.KindNotFound, s.ID(), err, "%v", err)
	case errors.As(err, &be), errors.Is(err, run.ErrClosed), errors.Is(err, engine.ErrOverBudget), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return admissionError(s, err)
	case strings.Contains(err.Error(), "over limit"): // wazero: "min N pages (...) over limit of M pages"
		return run.Errorf(run.KindMemoryLimit, s.ID(), err, "%v", err)
	}
	return run.Errorf(run.KindInternal, s.ID(), err, "%v", err)
}

// admissionError names the kind of a refused admission.
func admissionError(s *registry.Skill, err error) *run.Error {
	var be *engine.BusyError
	switch {
	case errors.Is(err, run.ErrClosed):
		return run.Errorf(run.KindBusy, s.ID(), err, "the runtime is closed")
	case errors.As(err, &be):
		re := run.Errorf(run.KindBusy, s.ID(), err, "%s", be.Msg)
		re.RetryAfter = time.Second
		return re
	case errors.Is(err, engine.ErrOverBudget):
		// Not s.Grant(): an instruction skill has none (its programs have theirs), and the
		// charge in err is the run's, whichever grant it came from.
		return run.Errorf(run.KindMemoryLimit, s.ID(), err, "the run's memory (its memoryMiB, plus what the host holds for a run): %v; lower its memoryMiB or raise the budget", err)
	case errors.Is(err, context.DeadlineExceeded):
		return run.Errorf(run.KindTimeout, s.ID(), err, "the caller's deadline passed while the run waited to be admitted")
	case errors.Is(err, context.Canceled):
		return run.Errorf(run.KindCanceled, s.ID(), err, "the caller canceled the run while it waited to be admitted")
	}
	return run.Errorf(run.KindInternal, s.ID(), err, "%v", err)
}

// execute runs an admitted run under grant: it makes the run's SkillContext, calls the module
// (or the script's interpreter: job), and reads its output.
func (rt *Runtime) execute(ctx context.Context, s *registry.Skill, grant *policy.Grant, c *engine.Compiled, job *script.Job, input []byte, res *run.Result, emit emitter, ask *asking) *run.Error {
	host := grant.Host()
	var outDir *output
	if grant.Artifacts != nil {
		var err error
		if outDir, host, err = newOutput(grant); err != nil {
			if diskfull.Is(err) { // the host's condition, and it passes: busy, not internal
				return run.Errorf(run.KindBusy, s.ID(), diskfull.Name(err, "the run's output directory"), "no space left on the device for the run's output directory: try again later")
			}
			return run.Errorf(run.KindInternal, s.ID(), err, "the run's output directory cannot be made")
		}
		defer outDir.remove()
	}
	call := hostfuncs.NewCall(host)
	call.Ask = ask.hostAsker()
	if emit != nil {
		call.OnLog = func(e run.LogEntry) { emit(run.Event{Type: "log", Log: &e}) }
	}
	var out []byte
	var rerr *run.Error
	if job != nil {
		out, rerr = rt.callScript(ctx, s, job, call, input, res, emit)
	} else {
		out, rerr = rt.call(ctx, s, c, call, input, res, emit)
	}
	var keepErr *run.Error
	if outDir != nil {
		keepErr = rt.keepOutput(ctx, s, outDir, call, res, emit)
	}
	res.Logs, res.LogsDropped = call.Logs()
	if res.Logs == nil {
		res.Logs = []run.LogEntry{}
	}
	u := call.Usage()
	u.PeakMemoryBytes = res.Usage.PeakMemoryBytes // the runtime's own measure, if already taken
	u.Asked = ask.records()
	res.Usage = u
	if rerr != nil {
		return rerr
	}
	value, skillErr := interpret(out)
	if skillErr != "" {
		// A skill that fails after the grant refused it something most likely failed because of
		// it: say so, so a caller can tell "needs a policy change" from "the skill failed".
		if call.Refused() > 0 {
			return run.Errorf(run.KindPermissionDenied, s.ID(), nil, "%s", skillErr)
		}
		return run.Errorf(run.KindSkillError, s.ID(), nil, "%s", skillErr)
	}
	if keepErr != nil {
		return keepErr
	}
	res.Success, res.Result = true, value
	return nil
}

// call instantiates the module and calls its entrypoint, turning every way it can fail into a
// run.Error of the right kind. The output it returns is the host's own copy, at most the run's
// maxOutputBytes.
func (rt *Runtime) call(ctx context.Context, s *registry.Skill, c *engine.Compiled, call *hostfuncs.Call, input []byte, res *run.Result, emit emitter) ([]byte, *run.Error) {
	timeout := time.Duration(s.Grant().Limits.TimeoutMs) * time.Millisecond
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The run ends with ctx, at its timeout, or with Close once it has waited long enough.
	if !rt.track(res, cancel) {
		cancel()
	}
	defer rt.untrack(res)

	warm := c.TakeWarm()
	rio := &runIO{call: call, maxLog: s.Grant().Limits.MaxLogBytes,
		stdout: hostfuncs.LineWriter{Call: call, Source: "stdout", Level: "info"},
		stderr: hostfuncs.LineWriter{Call: call, Source: "stderr", Level: "warn"}}
	var meter *engine.MemoryMeter
	if warm != nil {
		meter = warm.Meter // the instance's memories were made with it
	} else {
		meter = &rio.meter
		meter.Init(s.State().LinearLimit)
	}
	// Deferred first, so it runs last: the memories are unmapped only after the instance is
	// closed and its call has returned.
	defer meter.Release()
	defer func() {
		peak, _ := meter.Stats()
		res.Usage.PeakMemoryBytes = peak
	}()
	stdout, stderr := &rio.stdout, &rio.stderr
	defer stdout.Flush()
	defer stderr.Flush()
	if c.Native != nil {
		var mod api.Module
		var mc wazero.ModuleConfig
		initialised := false
		if warm != nil {
			warm.Slot.Fill(stdout, stderr, runCtx.Done())
			mod, initialised = warm.Mod, warm.Initialised
		} else {
			slot := c.Native.TakeSlot()
			// Deferred before callNative runs, so it runs after: the instance is closed by then.
			defer c.Native.PutSlot(slot)
			slot.Fill(stdout, stderr, runCtx.Done())
			mc = slot.Config
		}
		return rt.callNative(runCtx, ctx, s, c, mod, initialised, rio, meter, mc, input, emit)
	}
	mc := engine.BaseModuleConfig().WithNanosleep(engine.SleepUntil(runCtx.Done())).WithStdout(stdout).WithStderr(stderr)
	return rt.callExtism(runCtx, ctx, s, c.Plugin, call, meter, mc, input, emit)
}

// callNative runs the call on the native kernel. The kernel's blocks are metered with the
// module's memories, and the output's size is checked before the host copies it.
// mod is an instance from the module's warm pool (initialised when its initialiser ran already),
// or nil to make one with mc.
func (rt *Runtime) callNative(runCtx, ctx context.Context, s *registry.Skill, c *engine.Compiled, mod api.Module, initialised bool, rio *runIO, meter *engine.MemoryMeter, mc wazero.ModuleConfig, input []byte, emit emitter) ([]byte, *run.Error) {
	id, m, call := s.ID(), c.Native, rio.call
	// Whichever instance this run holds (a warm one from the start, or the one made below) is
	// closed when it returns, on every path.
	defer func() {
		if mod != nil {
			_ = mod.Close(context.Background())
		}
	}()
	if !m.Has(s.Manifest().Entrypoint) {
		return nil, noEntrypoint(s)
	}
	k := &rio.kernel
	err := k.Init(meter.Arena(), input)
	if err != nil {
		return nil, run.Errorf(run.KindMemoryLimit, id, err, "%v", err)
	}
	k.Observer = rio
	callCtx := extismhost.WithKernel(runCtx, call, k)
	if mod == nil {
		start := time.Now()
		mod, err = m.Instantiate(experimental.WithMemoryAllocator(callCtx, meter), mc)
		if err != nil {
			return nil, classify(runCtx, ctx, s, call, meter, err)
		}
		em := engineModule(s)
		rt.engine.Instantiated(c, &em, time.Since(start), rt.logger)
	}
	if meter.StartedOver() {
		return nil, startedOver(s)
	}
	// Registered before the call, so a deadline that passed already stops the guest at once.
	defer m.StopWhenDone(runCtx, mod)()
	emit.send(run.Event{Type: "status", Status: "running"})
	rc, err := m.Call(callCtx, mod, initialised, s.Manifest().Entrypoint, k)
	if err == nil && runCtx.Err() != nil {
		// The deadline passed while the guest ran (a sleep it cut short, say): the run is over
		// whatever the guest made of it, as Extism's next kernel call would have found.
		err = runCtx.Err()
	}
	if err != nil {
		return nil, classify(runCtx, ctx, s, call, meter, err)
	}
	if rc != 0 {
		return nil, nonZero(s, rc)
	}
	if n := k.OutputLength(); n > uint64(s.Grant().Limits.MaxOutputBytes) {
		return nil, outputTooLarge(s, int64(n))
	}
	return append([]byte(nil), k.Output()...), nil
}

// emitter sends a run's events to its listener; nil when it has none.
type emitter func(run.Event)

func (e emitter) send(ev run.Event) {
	if e != nil {
		e(ev)
	}
}

// runIO is what a run's instance writes to, in one allocation: its stdout and stderr, and (as
// the native kernel's Observer) its log calls and faults, all recorded in call.
type runIO struct {
	stdout, stderr hostfuncs.LineWriter
	call           *hostfuncs.Call
	maxLog         int64
	// The run's kernel (native engine) and memory meter (unless its instance is a warm one), in
	// the same allocation.
	kernel kernel.Kernel
	meter  engine.MemoryMeter
}

func (r *runIO) Fault(f *kernel.Fault) { r.call.SetFault(f) }

func (r *runIO) Log(level int, msg []byte) {
	// A message over the whole log budget could never be kept: do not copy it.
	if int64(len(msg)) > r.maxLog {
		r.call.DropLog()
		return
	}
	r.call.Log(kernelLevel(level), "", string(msg))
}

// callExtism runs the call with Extism's go-sdk.
func (rt *Runtime) callExtism(runCtx, ctx context.Context, s *registry.Skill, p *extism.CompiledPlugin, call *hostfuncs.Call, meter *engine.MemoryMeter, mc wazero.ModuleConfig, input []byte, emit emitter) ([]byte, *run.Error) {
	instCtx := experimental.WithMemoryAllocator(extismhost.WithCall(runCtx, call), meter)
	inst, err := p.Instance(instCtx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, classify(runCtx, ctx, s, call, meter, fmt.Errorf("instantiate: %w", err))
	}
	defer inst.Close(context.Background())
	if meter.StartedOver() {
		return nil, startedOver(s)
	}
	inst.SetLogger(func(level extism.LogLevel, msg string) {
		call.Log(extismLevel(level), "", msg)
	})
	if !inst.FunctionExists(s.Manifest().Entrypoint) {
		return nil, noEntrypoint(s)
	}
	emit.send(run.Event{Type: "status", Status: "running"})
	rc, out, err := inst.CallWithContext(instCtx, s.Manifest().Entrypoint, input)
	if err != nil {
		return nil, classify(runCtx, ctx, s, call, meter, err)
	}
	if rc != 0 {
		return nil, nonZero(s, rc)
	}
	if int64(len(out)) > s.Grant().Limits.MaxOutputBytes {
		return nil, outputTooLarge(s, int64(len(out)))
	}
	return out, nil
}

func noEntrypoint(s *registry.Skill) *run.Error {
	return run.Errorf(run.KindTrap, s.ID(), nil, "the module does not export %q; export it, or name the export in the manifest's entrypoint", s.Manifest().Entrypoint)
}

func startedOver(s *registry.Skill) *run.Error {
	return run.Errorf(run.KindMemoryLimit, s.ID(), nil, "the module needs more memory to start than its limit of %d MiB allows", s.Grant().Limits.MemoryMiB)
}

func nonZero(s *registry.Skill, rc uint32) *run.Error {
	return run.Errorf(run.KindSkillError, s.ID(), nil, "the module returned %d (non-zero means failure) without an error message", rc)
}

func outputTooLarge(s *registry.Skill, n int64) *run.Error {
	return run.Errorf(run.KindOutputLimit, s.ID(), nil, "output of %d bytes is more than maxOutputBytes (%d)", n, s.Grant().Limits.MaxOutputBytes)
}

// classify names the kind of a failed call. Order matters: a deadline or a cancellation explains
// whatever error wazero reported when it closed the module, and so does a guest fault recorded by a
// host function; only then is a trap a trap.
func classify(runCtx, parent context.Context, s *registry.Skill, call *hostfuncs.Call, meter *engine.MemoryMeter, err error) *run.Error {
	if re := contextError(runCtx, parent, s, err); re != nil {
		return re
	}
	id, limits := s.ID(), s.Grant().Limits
	msg := firstLine(err.Error())
	_, nearFull := meter.Stats()
	oom := func(cause error, what string) *run.Error {
		return run.Errorf(run.KindMemoryLimit, id, cause, "the module ran out of memory (limit %d MiB): %s", limits.MemoryMiB, what)
	}
	if f := call.Fault(); f != nil {
		if nearFull && strings.Contains(f.Error(), "cannot allocate the reply") {
			return oom(f, f.Error())
		}
		return run.Errorf(run.KindTrap, id, f, "%v", f)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		if nearFull {
			return oom(err, fmt.Sprintf("it exited with code %d", exit.ExitCode()))
		}
		return run.Errorf(run.KindSkillError, id, err, "the module exited with code %d", exit.ExitCode())
	}
	if isTrap(err) {
		if nearFull {
			return oom(err, msg)
		}
		return run.Errorf(run.KindTrap, id, err, "%s", msg)
	}
	// The guest set an Extism error (pdk.SetError) and returned non-zero.
	return run.Errorf(run.KindSkillError, id, err, "%s", msg)
}

// contextError is the run.Error of a run whose context ended — its timeout, its caller's deadline
// or cancellation, or Close — which explains whatever error the guest's engine reported; nil
// while the run's context is live.
func contextError(runCtx, parent context.Context, s *registry.Skill, err error) *run.Error {
	return contextErrorFor(runCtx, parent, s.ID(), s.Grant().Limits.TimeoutMs, err)
}

// contextErrorFor is contextError for a run of skill id with a timeout of timeoutMs.
func contextErrorFor(runCtx, parent context.Context, id string, timeoutMs int64, err error) *run.Error {
	timeout := time.Duration(timeoutMs) * time.Millisecond
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && parent.Err() == nil:
		return run.Errorf(run.KindTimeout, id, err, "the run took longer than its timeout of %s", timeout)
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		return run.Errorf(run.KindTimeout, id, err, "the caller's deadline passed")
	case parent.Err() != nil:
		return run.Errorf(run.KindCanceled, id, err, "%s", canceledMessage(parent))
	case runCtx.Err() != nil:
		// Neither its timeout nor its caller: Close stopped it (Run says so).
		return run.Errorf(run.KindCanceled, id, err, "the run was stopped")
	}
	return nil
}

// canceledMessage says who canceled a run whose caller's context ended: the cause the canceler
// gave (context.WithCancelCause: a face that cancels a run on someone's request names them
// there), or the caller when there is none.
func canceledMessage(parent context.Context) string {
	if cause := context.Cause(parent); cause != nil && !errors.Is(cause, context.Canceled) {
		return "the run was canceled: " + cause.Error()
	}
	return "the caller canceled the run"
}

// trapMessages are wazero's runtime errors (internal/wasmruntime), which it does not export as
// types; some reach us bare ("stack overflow"), some as "wasm error: ...".
var trapMessages = []string{"stack overflow", "invalid conversion to integer", "integer overflow",
	"integer divide by zero", "unreachable", "out of bounds memory access", "invalid table access",
	"indirect call type mismatch", "unaligned atomic", "expected shared memory", "too many waiters",
	"uncaught exception", "null reference"}

func isTrap(err error) bool {
	msg := err.Error()
	if strings.Contains(msg, "wasm error:") || strings.Contains(msg, "wasm stack trace") {
		return true
	}
	first := firstLine(msg)
	for _, t := range trapMessages {
		if first == t || strings.HasSuffix(first, ": "+t) {
			return true
		}
	}
	return false
}

// interpret reads a module's output: a SkillResult envelope is taken as such; other JSON is the
// result value; anything else is a string.
func interpret(out []byte) (json.RawMessage, string) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 {
		return json.RawMessage("null"), ""
	}
	if json.Valid(trimmed) {
		var env struct {
			Success optionalBool    `json:"success"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if trimmed[0] == '{' && mayNameSuccess(trimmed) && json.Unmarshal(trimmed, &env) == nil && env.Success.set {
			if env.Success.value {
				if len(env.Result) == 0 {
					return json.RawMessage("null"), ""
				}
				return env.Result, ""
			}
			return nil, errorText(env.Error)
		}
		return json.RawMessage(trimmed), ""
	}
	if !utf8.Valid(out) {
		out = []byte(strings.ToValidUTF8(string(out), "\uFFFD"))
	}
	s, _ := json.Marshal(string(out))
	return s, ""
}

// optionalBool is a JSON boolean that may be absent (or null), decoded without the allocation
// a *bool costs. Anything but true, false or null fails the decoding, as it would for a *bool.
type optionalBool struct{ set, value bool }

func (b *optionalBool) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case "true", "false":
		b.set, b.value = true, string(data) == "true"
	case "null":
		*b = optionalBool{}
	default:
		return fmt.Errorf("success must be a boolean, not %.20s", data)
	}
	return nil
}

// mayNameSuccess reports whether a JSON object could have a key encoding/json takes for
// "success": it matches keys case-insensitively, with Unicode folding ("ſuccess" is one) and
// escapes ("\u0073uccess"). An object with neither non-ASCII bytes nor backslashes nor an
// ASCII-case-insensitive "success" has none, and is no envelope: its decoding is skipped (it is
// most of a small run's allocations).
func mayNameSuccess(b []byte) bool {
	const word = "success"
	for i := range b {
		if b[i] >= utf8.RuneSelf || b[i] == '\\' {
			return true
		}
	}
	for i := 0; i+len(word) <= len(b); i++ {
		if b[i]|0x20 == 's' && bytes.EqualFold(b[i:i+len(word)], []byte(word)) {
			return true
		}
	}
	return false
}

// errorText reads a SkillResult error: a string, or any JSON (an object with a message, say).
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "the skill reported failure without an error message"
	}
	return string(raw)
}

// kernelLevel names a native kernel log level (log_info and up reach the runtime).
func kernelLevel(l int) string {
	switch l {
	case kernel.LevelWarn:
		return "warn"
	case kernel.LevelError:
		return "error"
	}
	return "info"
}

func extismLevel(l extism.LogLevel) string {
	switch l {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		return "debug"
	case extism.LogLevelWarn:
		return "warn"
	case extism.LogLevelError:
		return "error"
	}
	return "info"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func newRunID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}
