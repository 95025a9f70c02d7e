package runtime

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/quickjs"
)

// scriptCharge is what a run of script skill s may hold of the host's memory while it runs: its
// memory limit (the interpreter's whole instance, metered like a module's memories), the wasm
// call stack, one host call's buffers and the logs, the code it evaluates (held as Go text and
// copied into the instance), and the run's overhead.
func scriptCharge(s *Skill) int64 {
	l := s.grant.Limits
	io := max(l.MaxFetchBytes, l.MaxFileBytes, l.MaxWriteBytes)
	return l.MemoryMiB<<20 + stackReserve + io + l.MaxLogBytes + 2*s.state().size + runOverhead
}

// callScript runs s's script in a fresh instance of its interpreter ip, bounded like a module's
// run: the skill's timeout and ctx, its memory limit over the whole instance (interpreter
// included), its output and log limits. It returns the script's result as JSON, the host's own
// copy, at most maxOutputBytes.
func (rt *Runtime) callScript(ctx context.Context, s *Skill, ip *interp, call *hostfuncs.Call, input []byte, res *Result, emit emitter) ([]byte, *RunError) {
	timeout := time.Duration(s.grant.Limits.TimeoutMs) * time.Millisecond
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !rt.track(res, cancel) {
		cancel()
	}
	defer rt.untrack(res)

	code, err := s.script(runCtx)
	if err != nil {
		// The message goes to remote clients too: it names the skill's files, never their host path.
		var me *ManifestError
		if errors.As(err, &me) {
			err = errors.Join(ErrBroken, &SkillError{ID: s.id, Problems: []*ManifestError{me}})
			return nil, runErr(KindNotFound, s.id, err, "skill is broken: %s", strings.Join(s.remoteProblems(err), "; "))
		}
		return nil, runErr(KindNotFound, s.id, err, "%s", strings.Join(s.remoteProblems(err), "; "))
	}
	meter := newMemoryMeter(uint64(s.grant.Limits.MemoryMiB) << 20)
	defer meter.release()
	defer func() {
		peak, _ := meter.stats()
		res.Usage.PeakMemoryBytes = peak
	}()
	emit.send(Event{Type: "status", Status: "running"})
	r, err := quickjs.Run(experimental.WithMemoryAllocator(runCtx, meter), ip.js, quickjs.Program{
		Source: code,
		Args:   input,
		Limits: quickjs.Limits{
			HostCallTimeout: s.grant.host.Limits.FetchTimeout + time.Second,
			MaxOutputBytes:  s.grant.Limits.MaxLogBytes,
		},
	}, broker.CallHost{Call: call})
	if err != nil {
		return nil, scriptError(runCtx, ctx, s, call, err)
	}
	if int64(len(r.Value)) > s.grant.Limits.MaxOutputBytes {
		return nil, outputTooLarge(s, int64(len(r.Value)))
	}
	return r.Value, nil
}

// scriptError names the kind of a failed script run, as classify does for a module's: the run's
// deadline or its caller explain whatever the interpreter reported; an uncaught exception is the
// skill's error — permission_denied when the grant refused the skill something first, as for a
// compiled skill — with its stack in the logs.
func scriptError(runCtx, parent context.Context, s *Skill, call *hostfuncs.Call, err error) *RunError {
	if re := contextError(runCtx, parent, s, err); re != nil {
		return re
	}
	var qe *quickjs.Error
	if !errors.As(err, &qe) {
		if errors.Is(err, quickjs.ErrClosed) {
			return runErr(KindCanceled, s.id, err, "the run was stopped")
		}
		return runErr(KindInternal, s.id, err, "%v", err)
	}
	msg := qe.Message
	if qe.Name != "" {
		msg = qe.Name + ": " + qe.Message
	}
	if qe.Stack != "" {
		call.Log("error", "stderr", msg+"\n"+qe.Stack)
	}
	switch qe.Kind {
	case quickjs.KindTimeout:
		return runErr(KindTimeout, s.id, err, "the run took longer than its timeout of %s", time.Duration(s.grant.Limits.TimeoutMs)*time.Millisecond)
	case quickjs.KindMemoryLimit:
		return runErr(KindMemoryLimit, s.id, err, "the script ran out of memory (limit %d MiB): %s", s.grant.Limits.MemoryMiB, msg)
	case quickjs.KindPermissionDenied:
		return runErr(KindPermissionDenied, s.id, err, "%s", msg)
	}
	if call.Refused() > 0 {
		return runErr(KindPermissionDenied, s.id, err, "%s", msg)
	}
	return runErr(KindSkillError, s.id, err, "%s", msg)
}
