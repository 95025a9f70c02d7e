package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/extismhost"
)

// Run runs req.Skill with req.Args in a fresh instance and returns its Result, which is never
// nil. The error is nil when the run succeeded, and otherwise a *RunError whose Kind is also in
// Result.Error.
//
// Every face runs skills through here, in one pipeline:
//
//  1. resolve: the skill's current version is pinned for the whole run, whatever a concurrent
//     Reload or Install does (not_found for no such skill, an instruction-only or broken one);
//  2. validate: the arguments against the skill's schema, defaults applied (invalid_args);
//  3. compile the module if it is not yet, itself admitted: at most Admission.MaxCompiles at
//     once, its memory charged to the budget;
//  4. admit: a run slot and the run's memory charge (see runCharge), waiting in the queue up to
//     Admission.MaxWait (busy when the queue is full or the wait too long; ErrClosed after Close);
//  5. run, bounded by the skill's granted timeout and by ctx, whichever ends first;
//  6. account (Stats, every request, refused ones too) and record (RunRecord, admitted runs).
//
// Events (req.OnEvent) are sent only for admitted runs.
func (rt *Runtime) Run(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	res := &Result{RunID: newRunID(), Skill: req.Skill, Logs: []LogEntry{}}
	face := req.Face
	if face == "" {
		face = FaceLibrary
	}
	skillLabel := "" // known skills only: a metric label must not come from a client's typo
	admitted := false
	maxMessage := int64(maxMessageBytes)
	finish := func(err *RunError) (*Result, error) {
		res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			err.Skill = req.Skill
			// A message can carry what the guest chose (an Extism error, a trap's text): it is
			// held to what the run may output, like any other output of the guest.
			err.Message = capText(err.Message, maxMessage)
			res.Success, res.Result = false, nil
			res.Error = &ResultError{Kind: err.Kind, Message: err.Message}
		}
		rt.counters.observe(skillLabel, face, res, admitted)
		if admitted {
			msg := "run ok"
			if err != nil {
				msg = "run failed"
			}
			rt.logger.Info(msg, "skill", req.Skill, "run", res.RunID, "face", face, "caller", req.Caller,
				"kind", errKind(err), "ms", res.DurationMs, "trace", req.TraceParent)
			rt.history.add(&Record{Result: res, Face: face, Caller: req.Caller, StartedAt: start})
			if req.OnEvent != nil {
				req.OnEvent(Event{Type: "result", RunID: res.RunID, Result: res})
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
		return finish(runErr(KindBusy, req.Skill, ErrClosed, "the runtime is closed"))
	}
	rt.inflight.Add(1)
	rt.closeMu.RUnlock()
	defer rt.inflight.Done()

	s, rerr := rt.resolve(ctx, req.Skill)
	if rerr != nil {
		return finish(rerr)
	}
	skillLabel = s.id
	res.Version, res.Digest = s.Version(), s.state().digest
	// At least 1 KiB: the host's own words about a run must survive a tiny maxOutputBytes.
	maxMessage = min(maxMessage, max(s.grant.Limits.MaxOutputBytes, minMessageBytes))
	input, rerr := rt.validate(s, req)
	if rerr != nil {
		return finish(rerr)
	}
	c, err := rt.engine.acquire(ctx, s)
	if err != nil {
		return finish(acquireError(s, err))
	}
	defer rt.engine.release(c)
	release, err := rt.admission.acquire(ctx, runCharge(s), true)
	if err != nil {
		return finish(admissionError(s, err))
	}
	defer release()
	admitted = true

	// The run ends with ctx, or with Close once it has waited long enough.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(rt.stop, cancel)()
	emit := func(e Event) {
		if req.OnEvent != nil {
			e.RunID = res.RunID
			req.OnEvent(e)
		}
	}
	emit(Event{Type: "status", Status: "started"})
	rerr = rt.execute(ctx, s, c, input, res, emit)
	if rerr != nil && rerr.Kind == KindCanceled && rt.stop.Err() != nil {
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

func errKind(err *RunError) ErrorKind {
	if err == nil {
		return ""
	}
	return err.Kind
}

// resolve pins the current version of skill id, if it can run: checked (see Skill), on its first
// run, before anything is charged for it.
func (rt *Runtime) resolve(ctx context.Context, id string) (*Skill, *RunError) {
	s, ok := rt.lookup(id)
	switch {
	case !ok:
		return nil, runErr(KindNotFound, id, nil, "no skill with this id")
	case s.kind != Executable:
		return nil, runErr(KindNotFound, id, ErrNotExecutable, "skill %q has instructions only; read its SKILL.md instead of running it", id)
	}
	v, err := s.check(ctx)
	if err != nil {
		return nil, admissionError(s, err)
	}
	if v.status != StatusActive {
		return nil, runErr(KindNotFound, id, errors.Join(ErrBroken, v.err), "skill is broken: %v", v.err)
	}
	return s, nil
}

// validate checks the request against s and returns the module's input.
func (rt *Runtime) validate(s *Skill, req Request) ([]byte, *RunError) {
	if len(req.Argv) > 0 || req.Stdin != nil {
		return nil, runErr(KindInvalidArgs, s.id, nil, "skill %q takes JSON arguments only, not a command line or standard input", s.id)
	}
	input, err := s.schema.Prepare(req.Args)
	if err != nil {
		return nil, err.(*RunError)
	}
	// The input is copied into the module's memory; Extism drops an input that does not fit
	// without a word, so refuse one that cannot.
	if memBytes := s.grant.Limits.MemoryMiB << 20; int64(len(input)) > memBytes/2 {
		return nil, runErr(KindInvalidArgs, s.id, nil, "arguments of %d bytes are more than half the skill's memory limit (%d MiB)", len(input), s.grant.Limits.MemoryMiB)
	}
	return input, nil
}

// acquireError names the kind of a failed compilation (or of its admission).
func acquireError(s *Skill, err error) *RunError {
	var be *busyError
	var ce *CompileError
	switch {
	case errors.As(err, &ce) && ce.Bound == "compileMemory":
		return runErr(KindMemoryLimit, s.id, err, "the module cannot be compiled: %s", ce.Msg)
	case errors.As(err, &ce) && ce.Bound == "compileTimeout":
		return runErr(KindTimeout, s.id, err, "the module cannot be compiled: %s", ce.Msg)
	case errors.Is(err, ErrModuleChanged):
		return runErr(KindNotFound, s.id, err, "%v", err)
	case errors.As(err, &be), errors.Is(err, ErrClosed), errors.Is(err, errOverBudget), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return admissionError(s, err)
	case strings.Contains(err.Error(), "over limit"): // wazero: "min N pages (...) over limit of M pages"
		return runErr(KindMemoryLimit, s.id, err, "%v", err)
	}
	return runErr(KindInternal, s.id, err, "%v", err)
}

// admissionError names the kind of a refused admission.
func admissionError(s *Skill, err error) *RunError {
	var be *busyError
	switch {
	case errors.Is(err, ErrClosed):
		return runErr(KindBusy, s.id, err, "the runtime is closed")
	case errors.As(err, &be):
		re := runErr(KindBusy, s.id, err, "%s", be.msg)
		re.RetryAfter = time.Second
		return re
	case errors.Is(err, errOverBudget):
		return runErr(KindMemoryLimit, s.id, err, "the skill's memory (memoryMiB %d, plus what the host holds for a run) is %v; lower its memoryMiB or raise the budget", s.grant.Limits.MemoryMiB, err)
	case errors.Is(err, context.DeadlineExceeded):
		return runErr(KindTimeout, s.id, err, "the caller's deadline passed while the run waited to be admitted")
	case errors.Is(err, context.Canceled):
		return runErr(KindCanceled, s.id, err, "the caller canceled the run while it waited to be admitted")
	}
	return runErr(KindInternal, s.id, err, "%v", err)
}

// execute runs an admitted run: it makes the run's SkillContext, calls the module, and reads its
// output.
func (rt *Runtime) execute(ctx context.Context, s *Skill, c *compiled, input []byte, res *Result, emit func(Event)) *RunError {
	call := hostfuncs.NewCall(s.grant.host)
	call.OnLog = func(e LogEntry) { emit(Event{Type: "log", Log: &e}) }
	out, rerr := rt.call(ctx, s, c, call, input, res, emit)
	res.Logs, res.LogsDropped = call.Logs()
	if res.Logs == nil {
		res.Logs = []LogEntry{}
	}
	res.Usage.Usage = call.Usage()
	if rerr != nil {
		return rerr
	}
	if int64(len(out)) > s.grant.Limits.MaxOutputBytes {
		return runErr(KindOutputLimit, s.id, nil, "output of %d bytes is more than maxOutputBytes (%d)", len(out), s.grant.Limits.MaxOutputBytes)
	}
	value, skillErr := interpret(out)
	if skillErr != "" {
		// A skill that fails after the grant refused it something most likely failed because of
		// it: say so, so a caller can tell "needs a policy change" from "the skill failed".
		if call.Refused() > 0 {
			return runErr(KindPermissionDenied, s.id, nil, "%s", skillErr)
		}
		return runErr(KindSkillError, s.id, nil, "%s", skillErr)
	}
	res.Success, res.Result = true, value
	return nil
}

// call instantiates the module and calls its entrypoint, turning every way it can fail into a
// RunError of the right kind.
func (rt *Runtime) call(ctx context.Context, s *Skill, c *compiled, call *hostfuncs.Call, input []byte, res *Result, emit func(Event)) ([]byte, *RunError) {
	id := s.id
	timeout := time.Duration(s.grant.Limits.TimeoutMs) * time.Millisecond
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	meter := newMemoryMeter(s.state().linearLimit)
	// Deferred first, so it runs last: the memories are unmapped only after the instance is
	// closed and its call has returned.
	defer meter.release()
	instCtx := experimental.WithMemoryAllocator(extismhost.WithCall(runCtx, call), meter)
	stdout := &hostfuncs.LineWriter{Call: call, Source: "stdout", Level: "info"}
	stderr := &hostfuncs.LineWriter{Call: call, Source: "stderr", Level: "warn"}
	defer stdout.Flush()
	defer stderr.Flush()
	mc := wazero.NewModuleConfig().
		WithRandSource(rand.Reader).
		WithSysWalltime().WithSysNanotime().
		// WASI poll_oneoff sleeps with this; time.Sleep would outlive the run's deadline.
		WithNanosleep(func(ns int64) {
			t := time.NewTimer(time.Duration(ns))
			defer t.Stop()
			select {
			case <-t.C:
			case <-runCtx.Done():
			}
		}).
		WithStdout(stdout).WithStderr(stderr)

	inst, err := c.plugin.Instance(instCtx, extism.PluginInstanceConfig{ModuleConfig: mc})
	defer func() {
		peak, _ := meter.stats()
		res.Usage.PeakMemoryBytes = peak
	}()
	if err != nil {
		return nil, classify(runCtx, ctx, s, call, meter, fmt.Errorf("instantiate: %w", err))
	}
	defer inst.Close(context.Background())
	if meter.startedOver() {
		return nil, runErr(KindMemoryLimit, id, nil, "the module needs more memory to start than its limit of %d MiB allows", s.grant.Limits.MemoryMiB)
	}
	inst.SetLogger(func(level extism.LogLevel, msg string) {
		call.Log(extismLevel(level), "", msg)
	})
	if !inst.FunctionExists(s.manifest.Entrypoint) {
		return nil, runErr(KindTrap, id, nil, "the module does not export %q; export it, or name the export in the manifest's entrypoint", s.manifest.Entrypoint)
	}
	emit(Event{Type: "status", Status: "running"})
	rc, out, err := inst.CallWithContext(instCtx, s.manifest.Entrypoint, input)
	if err != nil {
		return nil, classify(runCtx, ctx, s, call, meter, err)
	}
	if rc != 0 {
		return nil, runErr(KindSkillError, id, nil, "the module returned %d (non-zero means failure) without an error message", rc)
	}
	return out, nil
}

// classify names the kind of a failed call. Order matters: a deadline or a cancellation explains
// whatever error wazero reported when it closed the module, and so does a guest fault recorded by a
// host function; only then is a trap a trap.
func classify(runCtx, parent context.Context, s *Skill, call *hostfuncs.Call, meter *memoryMeter, err error) *RunError {
	id, limits := s.id, s.grant.Limits
	timeout := time.Duration(limits.TimeoutMs) * time.Millisecond
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && parent.Err() == nil:
		return runErr(KindTimeout, id, err, "the run took longer than its timeout of %s", timeout)
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		return runErr(KindTimeout, id, err, "the caller's deadline passed")
	case parent.Err() != nil:
		return runErr(KindCanceled, id, err, "the caller canceled the run")
	}
	msg := firstLine(err.Error())
	_, nearFull := meter.stats()
	oom := func(cause error, what string) *RunError {
		return runErr(KindMemoryLimit, id, cause, "the module ran out of memory (limit %d MiB): %s", limits.MemoryMiB, what)
	}
	if f := call.Fault(); f != nil {
		if nearFull && strings.Contains(f.Error(), "cannot allocate the reply") {
			return oom(f, f.Error())
		}
		return runErr(KindTrap, id, f, "%v", f)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		if nearFull {
			return oom(err, fmt.Sprintf("it exited with code %d", exit.ExitCode()))
		}
		return runErr(KindSkillError, id, err, "the module exited with code %d", exit.ExitCode())
	}
	if isTrap(err) {
		if nearFull {
			return oom(err, msg)
		}
		return runErr(KindTrap, id, err, "%s", msg)
	}
	// The guest set an Extism error (pdk.SetError) and returned non-zero.
	return runErr(KindSkillError, id, err, "%s", msg)
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
			Success *bool           `json:"success"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if trimmed[0] == '{' && json.Unmarshal(trimmed, &env) == nil && env.Success != nil {
			if *env.Success {
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
