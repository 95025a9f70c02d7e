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

// Run runs skill id with args (a JSON object; empty means {}) in a fresh instance, and returns
// its Result. The Result is never nil. The error is nil when the run succeeded, and otherwise a
// *RunError whose Kind is also in Result.Error.
//
// The run is bounded by the skill's granted timeout and by ctx, whichever ends first; it pins the
// skill version current when it starts, whatever a concurrent Reload does.
func (rt *Runtime) Run(ctx context.Context, id string, args []byte, opts ...RunOption) (*Result, error) {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	start := time.Now()
	res := &Result{RunID: newRunID(), Skill: id, Logs: []LogEntry{}}
	emit := func(e Event) {
		if o.onEvent != nil {
			e.RunID = res.RunID
			o.onEvent(e)
		}
	}
	finish := func(err *RunError) (*Result, error) {
		res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			err.Skill = id
			res.Success, res.Result = false, nil
			res.Error = &ResultError{Kind: err.Kind, Message: err.Message}
			rt.logger.Info("run failed", "skill", id, "run", res.RunID, "kind", err.Kind, "ms", res.DurationMs)
		} else {
			rt.logger.Info("run ok", "skill", id, "run", res.RunID, "ms", res.DurationMs)
		}
		emit(Event{Type: "result", Result: res})
		if err != nil {
			return res, err
		}
		return res, nil
	}
	emit(Event{Type: "status", Status: "started"})

	s, err := rt.Skill(id)
	if err != nil {
		return finish(err.(*RunError))
	}
	res.Version = s.Version()
	if s.kind != Executable {
		return finish(runErr(KindNotFound, id, nil, "skill %q has instructions only; read its SKILL.md instead of running it", id))
	}
	if s.status != StatusActive {
		return finish(runErr(KindNotFound, id, s.err, "skill is broken: %v", s.err))
	}
	input, err := s.schema.Prepare(args)
	if err != nil {
		return finish(err.(*RunError))
	}
	// The input is copied into the module's memory; Extism drops an input that does not fit
	// without a word, so refuse one that cannot.
	if memBytes := s.grant.Limits.MemoryMiB << 20; int64(len(input)) > memBytes/2 {
		return finish(runErr(KindInvalidArgs, id, nil, "arguments of %d bytes are more than half the skill's memory limit (%d MiB)", len(input), s.grant.Limits.MemoryMiB))
	}

	c, err := rt.engine.acquire(ctx, s)
	if err != nil {
		kind := KindInternal
		if strings.Contains(err.Error(), "over limit") { // wazero: "min N pages (...) over limit of M pages"
			kind = KindMemoryLimit
		}
		return finish(runErr(kind, id, err, "%v", err))
	}
	defer rt.engine.release(c)

	call := hostfuncs.NewCall(s.grant.host)
	call.OnLog = func(e LogEntry) { emit(Event{Type: "log", Log: &e}) }
	out, rerr := rt.call(ctx, s, c, call, input, res, emit)
	res.Logs, res.LogsDropped = call.Logs()
	if res.Logs == nil {
		res.Logs = []LogEntry{}
	}
	u := call.Usage()
	res.Usage.Usage = u
	if rerr != nil {
		return finish(rerr)
	}
	if int64(len(out)) > s.grant.Limits.MaxOutputBytes {
		return finish(runErr(KindOutputLimit, id, nil, "output of %d bytes is more than maxOutputBytes (%d)", len(out), s.grant.Limits.MaxOutputBytes))
	}
	value, skillErr := interpret(out)
	if skillErr != "" {
		// A skill that fails after the grant refused it something most likely failed because of
		// it: say so, so a caller can tell "needs a policy change" from "the skill failed".
		if call.Refused() > 0 {
			return finish(runErr(KindPermissionDenied, id, nil, "%s", skillErr))
		}
		return finish(runErr(KindSkillError, id, nil, "%s", skillErr))
	}
	res.Success, res.Result = true, value
	return finish(nil)
}

// call instantiates the module and calls its entrypoint, turning every way it can fail into a
// RunError of the right kind.
func (rt *Runtime) call(ctx context.Context, s *Skill, c *compiled, call *hostfuncs.Call, input []byte, res *Result, emit func(Event)) ([]byte, *RunError) {
	id := s.id
	timeout := time.Duration(s.grant.Limits.TimeoutMs) * time.Millisecond
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	meter := &memoryMeter{}
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
