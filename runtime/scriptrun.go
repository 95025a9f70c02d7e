package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/cpython"
	"github.com/skillbox-dev/skillbox/internal/quickjs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/runtime/internal/script"
	"github.com/skillbox-dev/skillbox/spec"
)

// codeError is the run.Error of a script skill whose code no longer reads as its version's.
func codeError(s *registry.Skill, err error) *run.Error {
	// The message goes to remote clients too: it names the skill's files, never their host path.
	var me *spec.ManifestError
	if errors.As(err, &me) {
		return brokenErr(s, &spec.SkillError{ID: s.ID(), Problems: []*spec.ManifestError{me}})
	}
	return run.Errorf(run.KindNotFound, s.ID(), err, "%s", strings.Join(s.RemoteProblems(err), "; "))
}

// callScript runs job in a fresh instance of its interpreter, bounded like a module's run: the
// grant's timeout and ctx, its memory limit over the whole instance (interpreter included), its
// output and log limits. It returns the result as JSON — execute's value, or a program's
// ProgramOutput — the host's own copy, at most maxOutputBytes.
func (rt *Runtime) callScript(ctx context.Context, s *registry.Skill, job *script.Job, call *hostfuncs.Call, input []byte, res *run.Result, emit emitter) ([]byte, *run.Error) {
	l := job.Grant.Limits
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(l.TimeoutMs)*time.Millisecond)
	defer cancel()
	if !rt.track(res, cancel) {
		cancel()
	}
	defer rt.untrack(res)

	meter := engine.NewMemoryMeter(uint64(l.MemoryMiB) << 20)
	defer meter.Release()
	defer func() {
		peak, _ := meter.Stats()
		res.Usage.PeakMemoryBytes = peak
	}()
	emit.send(run.Event{Type: "status", Status: "running"})
	instCtx := experimental.WithMemoryAllocator(runCtx, meter)
	job.Memory = meter
	value, prog, err := script.Run(instCtx, job, call, input, rt.bytecode)
	if err != nil {
		return nil, scriptError(runCtx, ctx, s, job, call, err)
	}
	if prog != nil {
		// Each stream is capped at maxOutputBytes; the whole is allowed both and its framing.
		out, _ := json.Marshal(prog)
		return out, nil
	}
	if int64(len(value)) > l.MaxOutputBytes {
		return nil, outputTooLarge(s, int64(len(value)))
	}
	return value, nil
}

// scriptError names the kind of a failed script run, as classify does for a module's: the run's
// deadline or its caller explain whatever the interpreter reported; an uncaught exception is the
// skill's error — permission_denied when the grant refused the skill something first, as for a
// compiled skill — with its stack in the logs.
func scriptError(runCtx, parent context.Context, s *registry.Skill, job *script.Job, call *hostfuncs.Call, err error) *run.Error {
	l := job.Grant.Limits
	if re := contextErrorFor(runCtx, parent, s.ID(), l.TimeoutMs, err); re != nil {
		return re
	}
	f, ok := failureOf(err)
	if !ok {
		if errors.Is(err, quickjs.ErrClosed) || errors.Is(err, cpython.ErrClosed) {
			return run.Errorf(run.KindCanceled, s.ID(), err, "the run was stopped")
		}
		return run.Errorf(run.KindInternal, s.ID(), err, "%v", err)
	}
	msg := f.message
	if f.name != "" {
		msg = f.name + ": " + f.message
	}
	if f.stack != "" {
		call.Log("error", "stderr", msg+"\n"+f.stack)
	}
	switch f.kind {
	case run.KindTimeout:
		return run.Errorf(run.KindTimeout, s.ID(), err, "the run took longer than its timeout of %s", time.Duration(l.TimeoutMs)*time.Millisecond)
	case run.KindMemoryLimit:
		return run.Errorf(run.KindMemoryLimit, s.ID(), err, "the script ran out of memory (limit %d MiB): %s", l.MemoryMiB, msg)
	case run.KindPermissionDenied:
		return run.Errorf(run.KindPermissionDenied, s.ID(), err, "%s", msg)
	case run.KindOutputLimit:
		return run.Errorf(run.KindOutputLimit, s.ID(), err, "%s (maxOutputBytes is %d)", msg, l.MaxOutputBytes)
	}
	if call.Refused() > 0 {
		return run.Errorf(run.KindPermissionDenied, s.ID(), err, "%s", msg)
	}
	return run.Errorf(run.KindSkillError, s.ID(), err, "%s", msg)
}

// failure is how a script run failed, in the runtime's terms, from either interpreter.
type failure struct {
	kind                 run.ErrorKind
	name, message, stack string
}

// failureOf reads an interpreter's *scripterr.Error (CPython's traceback went to the run's logs
// already, QuickJS's stack is in it); ok is false for any other error (the host's).
func failureOf(err error) (failure, bool) {
	var se *scripterr.Error
	if errors.As(err, &se) {
		return failure{kind: run.ErrorKind(se.Kind.String()), name: se.Name, message: se.Message, stack: se.Stack}, true
	}
	return failure{}, false
}
