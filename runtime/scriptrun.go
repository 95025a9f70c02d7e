package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/cpython"
	"github.com/skillbox-dev/skillbox/internal/quickjs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/skillbox-dev/skillbox/internal/wasifs"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// scriptJob is a run of a script: a script skill's execute, or a program of any skill.
type scriptJob struct {
	lang  spec.Language
	grant *policy.Grant
	// code is what the interpreter evaluates: the JavaScript bundle (for Python, execute.py,
	// read only to check it); sum is its sha256, hex.
	code, sum string
	// prog is the program run with argv and stdin; nil for execute.
	prog  *registry.Program
	argv  []string
	stdin []byte
	ip    *engine.Interp // acquired by Run
}

// executeJob prepares a run of script skill s's execute: its code, checked to be the version's.
func (rt *Runtime) executeJob(ctx context.Context, s *registry.Skill) (*scriptJob, *run.Error) {
	code, err := s.Script(ctx)
	if err != nil {
		return nil, codeError(s, err)
	}
	// script checked that code is the version's: its sha256 is the verdict's.
	return &scriptJob{lang: s.Lang(), grant: s.Grant(), code: code, sum: s.State().Hash}, nil
}

// programJob prepares a run of the program req.Script of s, under its programs' grant.
func (rt *Runtime) programJob(ctx context.Context, s *registry.Skill, req run.Request) (*scriptJob, *run.Error) {
	prog, rerr := s.ResolveProgram(req.Script)
	if rerr != nil {
		return nil, rerr
	}
	if s.ProgramsErr() != nil {
		return nil, run.Errorf(run.KindNotFound, s.ID(), errors.Join(run.ErrBroken, s.ProgramsErr()), "the programs of skill %q cannot run: %s",
			s.ID(), strings.Join(s.RemoteProblems(s.ProgramsErr()), "; "))
	}
	job := &scriptJob{lang: prog.Lang, grant: s.ProgramGrant(), prog: prog, argv: req.Argv, stdin: req.Stdin}
	if job.grant == nil { // loaded without a scripts/ directory, which has appeared since
		return nil, run.Errorf(run.KindNotFound, s.ID(), run.ErrModuleChanged, "skill %q has changed since it was loaded; reload the skills and run it again", s.ID())
	}
	if max := job.grant.Limits.MaxOutputBytes; int64(len(req.Stdin)) > max {
		return nil, run.Errorf(run.KindInvalidArgs, s.ID(), nil, "standard input of %d bytes is more than maxOutputBytes (%d)", len(req.Stdin), max)
	}
	switch prog.Lang {
	case spec.LangJavaScript, spec.LangTypeScript:
		b, err := s.Bundle(ctx, prog.Rel, true)
		if err != nil {
			return nil, run.Errorf(run.KindInvalidArgs, s.ID(), err, "%s", strings.Join(s.RemoteProblems(&spec.SkillError{ID: s.ID(), Problems: []*spec.ManifestError{registry.ScriptProblemAt(s, prog.Rel, err)}}), "; "))
		}
		sum := sha256.Sum256([]byte(b.Code))
		job.code, job.sum = b.Code, hex.EncodeToString(sum[:])
	}
	return job, nil
}

// codeError is the run.Error of a script skill whose code no longer reads as its version's.
func codeError(s *registry.Skill, err error) *run.Error {
	// The message goes to remote clients too: it names the skill's files, never their host path.
	var me *spec.ManifestError
	if errors.As(err, &me) {
		return brokenErr(s, &spec.SkillError{ID: s.ID(), Problems: []*spec.ManifestError{me}})
	}
	return run.Errorf(run.KindNotFound, s.ID(), err, "%s", strings.Join(s.RemoteProblems(err), "; "))
}

// scriptCharge is what a script's run under grant may hold of the host's memory while it runs:
// its memory limit (the interpreter's whole instance, metered like a module's memories), the
// wasm call stack, one host call's buffers and the logs, the code it evaluates (held as Go text
// and copied into the instance), and the run's overhead.
func scriptCharge(grant *policy.Grant, codeBytes int64) int64 {
	l := grant.Limits
	io := max(l.MaxFetchBytes, l.MaxFileBytes, l.MaxWriteBytes, grant.OutputFileBytes())
	return l.MemoryMiB<<20 + engine.StackReserve + io + l.MaxLogBytes + 2*codeBytes + 2*l.MaxOutputBytes + engine.RunOverhead
}

// callScript runs job in a fresh instance of its interpreter, bounded like a module's run: the
// grant's timeout and ctx, its memory limit over the whole instance (interpreter included), its
// output and log limits. It returns the result as JSON — execute's value, or a program's
// ProgramOutput — the host's own copy, at most maxOutputBytes.
func (rt *Runtime) callScript(ctx context.Context, s *registry.Skill, job *scriptJob, call *hostfuncs.Call, input []byte, res *run.Result, emit emitter) ([]byte, *run.Error) {
	l := job.grant.Limits
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
	var value json.RawMessage
	var prog *run.ProgramOutput
	var err error
	if job.ip.Py != nil {
		value, prog, err = rt.runPython(instCtx, s, job, call, input)
	} else {
		value, prog, err = rt.runJavaScript(instCtx, job, call, input)
	}
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

// runJavaScript runs job in QuickJS.
func (rt *Runtime) runJavaScript(ctx context.Context, job *scriptJob, call *hostfuncs.Call, input []byte) (json.RawMessage, *run.ProgramOutput, error) {
	l := job.grant.Limits
	p := quickjs.Program{Source: job.code, Bytecode: rt.bytecodeOf(ctx, job), Args: input, Limits: quickjs.Limits{
		HostCallTimeout: job.grant.Host().Limits.FetchTimeout + time.Second,
		MaxOutputBytes:  l.MaxLogBytes,
	}}
	if job.prog != nil {
		p.Script, p.Argv, p.Stdin = job.prog.Rel, job.argv, job.stdin
		p.Limits.MaxOutputBytes = l.MaxOutputBytes
	}
	r, err := quickjs.Run(ctx, job.ip.JS, p, broker.CallHost{Call: call})
	if err != nil || job.prog == nil {
		return r.Value, nil, err
	}
	return nil, &run.ProgramOutput{ExitCode: r.ExitCode, Stdout: string(r.Stdout), Stderr: string(r.Stderr),
		StdoutDropped: r.StdoutDropped, StderrDropped: r.StderrDropped}, nil
}

// runPython runs job in CPython, with the grant's directories mounted for open() (symlinks never
// lead out of them, writes bounded by maxWriteBytes) and a private /tmp.
func (rt *Runtime) runPython(ctx context.Context, s *registry.Skill, job *scriptJob, call *hostfuncs.Call, input []byte) (json.RawMessage, *run.ProgramOutput, error) {
	l := job.grant.Limits
	mounts, cleanup, err := pythonMounts(call.Grant, l)
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	p := cpython.Program{Dir: s.Dir(), Args: input, FSConfig: mounts, Limits: cpython.Limits{
		HostCallTimeout: job.grant.Host().Limits.FetchTimeout + time.Second,
		MaxOutputBytes:  l.MaxLogBytes,
		MaxResultBytes:  l.MaxOutputBytes,
	}}
	if job.prog != nil {
		p.Script, p.Argv, p.Stdin, p.Cwd = job.prog.Rel, job.argv, job.stdin, programCwd(job.grant)
		p.Limits.MaxOutputBytes = l.MaxOutputBytes
	}
	r, err := cpython.Run(ctx, job.ip.Py, p, broker.CallHost{Call: call})
	if err != nil || job.prog == nil {
		return r.Value, nil, err
	}
	return nil, &run.ProgramOutput{ExitCode: r.ExitCode, Stdout: string(r.Stdout), Stderr: string(r.Stderr),
		StdoutDropped: r.StdoutDropped, StderrDropped: r.StderrDropped}, nil
}

// programCwd is where a Python program's relative paths lead: the first directory its grant
// lets it write (where a user would run it from, with the files it works on), else its private
// /tmp.
func programCwd(g *policy.Grant) string {
	for _, m := range g.Host().Mounts {
		if m.Writable && m.Path != policy.SkillMount {
			return m.Path
		}
	}
	return "/tmp"
}

// maxMountFiles bounds the files and directories a run may create in one writable mount.
const maxMountFiles = 1024

// pythonMounts makes the WASI mounts of a Python run whose host grant is g: each granted
// directory but the skill's own (the interpreter mounts that itself), read-only or writable as
// granted, and a private /tmp; each writable one may take maxWriteBytes, but a mount with bounds
// of its own (the run's /output) is held to them: all it may write is its maxTotalBytes, each
// file its maxFileBytes, and the files and directories it creates its maxFiles. A read-only
// directory that does not exist is left out; a writable one is made. cleanup closes them and
// removes the /tmp.
func pythonMounts(g *hostfuncs.Grant, l spec.Limits) (hook func(wazero.FSConfig) wazero.FSConfig, cleanup func(), err error) {
	var fss []*wasifs.FS
	var paths []string
	var tmpCleanup func()
	cleanup = func() {
		for _, f := range fss {
			_ = f.Close()
		}
		if tmpCleanup != nil {
			tmpCleanup()
		}
	}
	budget := wasifs.Options{Writable: true, MaxBytes: max(l.MaxWriteBytes, 1), MaxFiles: maxMountFiles}
	for _, m := range g.Mounts {
		if m.Path == policy.SkillMount || m.Path == "/tmp" {
			continue
		}
		opts := wasifs.Options{}
		if m.Writable {
			opts = budget
			if b := m.Bounds; b != nil {
				opts = wasifs.Options{Writable: true, MaxBytes: b.MaxTotalBytes, MaxFiles: b.MaxFiles, MaxFileBytes: b.MaxFileBytes}
			}
			if err := os.MkdirAll(m.Dir, 0o755); err != nil {
				cleanup()
				return nil, nil, fmt.Errorf("mount %s: %w", m.Path, err)
			}
		} else if _, err := os.Stat(m.Dir); err != nil {
			continue
		}
		f, err := wasifs.Dir(m.Dir, opts)
		if err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("mount %s: %w", m.Path, err)
		}
		fss, paths = append(fss, f), append(paths, m.Path)
	}
	tmp, tc, err := wasifs.PrivateTmp(budget)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	tmpCleanup = tc
	hook = func(c wazero.FSConfig) wazero.FSConfig {
		for i, f := range fss {
			c = c.(sysfs.FSConfig).WithSysFSMount(f, paths[i])
		}
		return c.(sysfs.FSConfig).WithSysFSMount(tmp, "/tmp")
	}
	return hook, cleanup, nil
}

// bytecodeOf returns the bytecode of job's bundle, compiling it on its first run (nil when it
// cannot be: the run then parses the source, and reports whatever is wrong with it). A program's
// bundle is compiled too: it is the same text for every run of it.
func (rt *Runtime) bytecodeOf(ctx context.Context, job *scriptJob) []byte {
	key, name := job.sum, "skill.js"
	if job.prog != nil {
		name = job.prog.Rel
		key += ":" + name // a program's file name is in its stack traces
	}
	en, err := rt.bytecode.Acquire(ctx, key, nil, func(ctx context.Context) ([]byte, int64, error) {
		code, err := job.ip.JS.Bytecode(ctx, job.code, name, maxBytecodeBytes/4)
		return code, int64(len(code)), err
	})
	if err != nil {
		return nil
	}
	defer rt.bytecode.Release(en) // the bytes stay the run's: nothing closes them
	return en.Value()
}

// scriptError names the kind of a failed script run, as classify does for a module's: the run's
// deadline or its caller explain whatever the interpreter reported; an uncaught exception is the
// skill's error — permission_denied when the grant refused the skill something first, as for a
// compiled skill — with its stack in the logs.
func scriptError(runCtx, parent context.Context, s *registry.Skill, job *scriptJob, call *hostfuncs.Call, err error) *run.Error {
	l := job.grant.Limits
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
