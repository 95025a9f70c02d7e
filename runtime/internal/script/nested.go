package script

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/cpython"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/spec"
)

// A Python program may run another Python program of its skill as a subprocess
// (subprocess.run([sys.executable, "other.py", ...]) or python -m): a nested run, in a fresh
// interpreter, under the same grant (the same hostfuncs.Call, so the same checks, logs and
// counts), the same deadline, the same file system (its mounts and private /tmp, so files pass
// between them as between processes) and the memory the program that asked has left. Its exit
// code and output come back as a child process's would. These bound how far it goes.
const (
	// MaxNestedDepth is how deep programs may run programs: a program that runs itself stops
	// at this depth with LimitExceeded, not at the run's deadline.
	MaxNestedDepth = 4
	// MaxNestedRuns is how many programs one run may start, at every depth together.
	MaxNestedRuns = 64
)

// nestedHost is the broker.Host of a Python program's run: its CallHost, and a
// broker.Runner for its subprocesses.
type nestedHost struct {
	broker.CallHost
	job    *Job
	mounts func(wazero.FSConfig) wazero.FSConfig
	limits cpython.Limits
	memory *engine.MemoryMeter // the memory of the run this host serves
	depth  int                 // 0 for the run's own program
	runs   *int                // the nested runs the whole run has started
}

func (h *nestedHost) RunProgram(ctx context.Context, req broker.ProgramRequest) (*broker.ProgramReply, error) {
	refuse := func(st hostfuncs.Status, format string, args ...any) (*broker.ProgramReply, error) {
		return nil, &hostfuncs.Refusal{Status: st, Message: "subprocess: " + fmt.Sprintf(format, args...)}
	}
	if h.depth+1 > MaxNestedDepth {
		return refuse(hostfuncs.StatusLimit, "%s would be the program nested %d deep; programs may run programs at most %d deep", req.Path, h.depth+1, MaxNestedDepth)
	}
	if *h.runs >= MaxNestedRuns {
		return refuse(hostfuncs.StatusLimit, "%s would be the run's program number %d; a run may start at most %d", req.Path, *h.runs+1, MaxNestedRuns)
	}
	rel, ok := strings.CutPrefix(req.Path, cpython.SkillPath+"/")
	if !ok {
		return refuse(hostfuncs.StatusNotFound, "%s is not a file of skill %q: a program may run only the skill's own programs", req.Path, h.job.Skill)
	}
	prog, rerr := h.job.ProgramAt(rel)
	if rerr != nil {
		return refuse(hostfuncs.StatusNotFound, "%s", rerr.Message)
	}
	if prog.Lang != spec.LangPython {
		return refuse(hostfuncs.StatusInvalid, "%s is not a Python program: sys.executable runs Python", prog.Rel)
	}
	if max := h.job.Grant.Limits.MaxOutputBytes; int64(len(req.Stdin)) > max {
		return refuse(hostfuncs.StatusLimit, "standard input of %d bytes for %s is more than maxOutputBytes (%d)", len(req.Stdin), prog.Rel, max)
	}
	if a := h.job.Admission; a != nil {
		more := NestedCharge(h.job.Grant)
		if err := a.Grow(h.job.Ticket, more); err != nil {
			return refuse(hostfuncs.StatusLimit, "the host has no room now for %s: %v", prog.Rel, err)
		}
		defer a.Shrink(h.job.Ticket, more)
	}
	*h.runs++
	meter := h.memory.Child()
	defer h.memory.Adopt(meter)
	defer meter.Release() // after the child's instance is closed: Run closes it
	runCtx := ctx
	if req.TimeoutMs > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	cwd := req.Cwd
	if cwd == "" {
		cwd = programCwd(h.job.Grant)
	}
	child := *h
	child.memory, child.depth = meter, h.depth+1
	p := cpython.Program{Dir: h.job.Dir, Script: prog.Rel, Module: req.Module, Argv: req.Argv, Stdin: req.Stdin,
		Cwd: cwd, MergeStderr: req.Merge, FSConfig: h.mounts, Limits: h.limits, Memory: meter}
	r, err := cpython.Run(runCtx, h.job.Interp.Py, p, &child)
	reply := &broker.ProgramReply{Exit: r.ExitCode, Stdout: base64.StdEncoding.EncodeToString(r.Stdout),
		StdoutDropped: r.StdoutDropped, StderrDropped: r.StderrDropped}
	stderr := r.Stderr
	if err == nil && meter.StartedOver() {
		err = &scripterr.Error{Kind: scripterr.MemoryLimit, Message: "the interpreter needs more memory than is left to start"}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the whole run is over
		}
		var se *scripterr.Error
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("%s: %w", prog.Rel, err)
		}
		// What a parent sees of a child the system stopped: killed (-9), and why on its stderr.
		reply.Exit = -9
		switch {
		case runCtx.Err() != nil:
			reply.TimedOut = true
		case se.Kind == scripterr.MemoryLimit:
			stderr = fmt.Appendf(stderr, "skillbox: %s ran out of memory (a program and the programs it runs share the run's %d MiB)\n",
				prog.Rel, h.job.Grant.Limits.MemoryMiB)
		default:
			reply.Exit = 1
			stderr = fmt.Appendf(stderr, "skillbox: %s failed: %s\n", prog.Rel, se.Message)
		}
	}
	reply.Stderr = base64.StdEncoding.EncodeToString(stderr)
	return reply, nil
}
