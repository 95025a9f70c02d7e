package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/cpython"
	"github.com/skillbox-dev/skillbox/internal/quickjs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/skillbox-dev/skillbox/internal/wasifs"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// Run runs job in its interpreter (job.Interp) with input as execute's arguments, its host calls
// made through call. A script's value comes back as JSON, a program's as its output; the error
// is the interpreter's (a *scripterr.Error for the script's own failure) or the host's. The
// caller bounds the run's time and memory through ctx, and names the kind of its failure.
// bytecode keeps the JavaScript bundles' compiled bytecode and the code of Python's execute.py
// (see NewBytecodeCache; nil: the run parses the bundle or compiles the file).
func Run(ctx context.Context, job *Job, call *hostfuncs.Call, input []byte, bytecode *Cache) (json.RawMessage, *run.ProgramOutput, error) {
	if job.Interp.Py != nil {
		return runPython(ctx, job, call, input, bytecode)
	}
	return runJavaScript(ctx, job, call, input, bytecode)
}

// runJavaScript runs job in QuickJS.
func runJavaScript(ctx context.Context, job *Job, call *hostfuncs.Call, input []byte, bytecode *Cache) (json.RawMessage, *run.ProgramOutput, error) {
	l := job.Grant.Limits
	code := bytecodeOf(ctx, bytecode, job)
	p := quickjs.Program{Source: job.Code, Bytecode: code, Prepared: preparedOf(ctx, bytecode, job, code), Args: input, Limits: quickjs.Limits{
		HostCallTimeout: job.Grant.Host().Limits.FetchTimeout + time.Second,
		MaxOutputBytes:  l.MaxLogBytes,
	}}
	if job.Prog != nil {
		p.Script, p.Argv, p.Stdin = job.Prog.Rel, job.Argv, job.Stdin
		p.Limits.MaxOutputBytes = l.MaxOutputBytes
	}
	r, err := quickjs.Run(ctx, job.Interp.JS, p, broker.CallHost{Call: call})
	if err != nil || job.Prog == nil {
		return r.Value, nil, err
	}
	return nil, &run.ProgramOutput{ExitCode: r.ExitCode, Stdout: string(r.Stdout), Stderr: string(r.Stderr),
		StdoutDropped: r.StdoutDropped, StderrDropped: r.StderrDropped}, nil
}

// runPython runs job in CPython, with the grant's directories mounted for open() (symlinks never
// lead out of them, writes bounded by maxWriteBytes) and a private /tmp.
func runPython(ctx context.Context, job *Job, call *hostfuncs.Call, input []byte, bytecode *Cache) (json.RawMessage, *run.ProgramOutput, error) {
	l := job.Grant.Limits
	mounts, cleanup, err := pythonMounts(call.Grant, l, func(err error) {
		call.Log("error", "skillbox", "the run's private /tmp cannot be made, so every use of it fails: "+err.Error())
	})
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	p := cpython.Program{Dir: job.Dir, Args: input, FSConfig: mounts, Limits: cpython.Limits{
		HostCallTimeout: job.Grant.Host().Limits.FetchTimeout + time.Second,
		MaxOutputBytes:  l.MaxLogBytes,
		MaxResultBytes:  l.MaxOutputBytes,
	}}
	if job.Memory != nil {
		p.Memory = job.Memory
	}
	if job.Prog != nil {
		p.Script, p.Argv, p.Stdin, p.Cwd = job.Prog.Rel, job.Argv, job.Stdin, programCwd(job.Grant)
		p.Limits.MaxOutputBytes = l.MaxOutputBytes
	} else {
		p.Code = pythonCodeOf(ctx, bytecode, job)
	}
	var host broker.Host = broker.CallHost{Call: call}
	if job.Prog != nil && job.ProgramAt != nil {
		meter := job.Memory
		if meter == nil { // a run with no meter of its own: its children get the grant's limit
			meter = engine.NewMemoryMeter(uint64(l.MemoryMiB) << 20)
		}
		host = &nestedHost{CallHost: broker.CallHost{Call: call}, job: job, mounts: mounts, limits: p.Limits, memory: meter, runs: new(int)}
	}
	r, err := cpython.Run(ctx, job.Interp.Py, p, host)
	if err != nil || job.Prog == nil {
		return r.Value, nil, err
	}
	return nil, &run.ProgramOutput{ExitCode: r.ExitCode, Stdout: string(r.Stdout), Stderr: string(r.Stderr),
		StdoutDropped: r.StdoutDropped, StderrDropped: r.StderrDropped}, nil
}

// programCwd is where a Python program's relative paths lead: the first directory its grant
// lets it write (where a user would run it from, with the files it works on), else its private
// /tmp.
func programCwd(g *policy.Grant) string { return cwdOf(g.Host().Mounts) }

// cwdOf is programCwd of a grant with mounts.
func cwdOf(mounts []hostfuncs.Mount) string {
	for _, m := range mounts {
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
// directory that does not exist is left out; a writable one is made. The /tmp is made when the
// guest first uses it; tmpFailed is told when it cannot be. cleanup closes them and removes the
// /tmp.
func pythonMounts(g *hostfuncs.Grant, l spec.Limits, tmpFailed func(error)) (hook func(wazero.FSConfig) wazero.FSConfig, cleanup func(), err error) {
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
	tmp, tc, err := wasifs.PrivateTmp(budget, tmpFailed)
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
func bytecodeOf(ctx context.Context, cache *Cache, job *Job) []byte {
	if cache == nil {
		return nil
	}
	key, name := job.Sum, "skill.js"
	if job.Prog != nil {
		name = job.Prog.Rel
		key += ":" + name // a program's file name is in its stack traces
	}
	en, err := cache.Acquire(ctx, key, nil, func(ctx context.Context) (Compiled, int64, error) {
		ctx, meter := apartFromTheRun(ctx, job)
		defer meter.Release()
		code, err := job.Interp.JS.Bytecode(ctx, job.Code, name, maxBytecodeBytes/4)
		return Compiled{Code: code}, int64(len(code)), err
	})
	if err != nil {
		return nil
	}
	defer cache.Release(en) // the bytes stay the run's: nothing closes them
	return en.Value().Code
}

// preparedOf returns job's bundle prepared from code (see quickjs.Prepare), preparing it on its
// first run; nil for a program, when code is nil, or when the bundle cannot be prepared: its top
// level must run in every run (kept, so it is not tried again), or it failed (the run reports
// how). A Prepared belongs to the interpreter compiled for the job's memory limit, which the key
// names.
func preparedOf(ctx context.Context, cache *Cache, job *Job, code []byte) *quickjs.Prepared {
	if cache == nil || code == nil || job.Prog != nil {
		return nil
	}
	key := fmt.Sprintf("js:%s@%dMiB", job.Sum, job.Grant.Limits.MemoryMiB)
	en, err := cache.Acquire(ctx, key, nil, func(ctx context.Context) (Compiled, int64, error) {
		ctx, meter := apartFromTheRun(ctx, job)
		defer meter.Release()
		p, err := job.Interp.JS.Prepare(ctx, code, maxPreparedBytes)
		if err != nil {
			var e *scripterr.Error
			if errors.Is(err, quickjs.ErrImpure) || errors.Is(err, quickjs.ErrTooLarge) || (errors.As(err, &e) && e.Kind != scripterr.Timeout) {
				return Compiled{}, 64, nil // the run evaluates the bundle itself, every time
			}
			return Compiled{}, 0, err // a deadline or the host: try again on a later run
		}
		return Compiled{JS: p}, p.Size(), nil
	})
	if err != nil {
		return nil
	}
	defer cache.Release(en)
	return en.Value().JS
}

// apartFromTheRun gives a compilation for job's cache its own memory meter, under the job's
// limit, and ctx with it as the allocator: the compilation's instance is thrown away before the
// run's starts, and must not count against it. Release the meter when the compilation is done.
func apartFromTheRun(ctx context.Context, job *Job) (context.Context, *engine.MemoryMeter) {
	meter := engine.NewMemoryMeter(uint64(job.Grant.Limits.MemoryMiB) << 20)
	return experimental.WithMemoryAllocator(ctx, meter), meter
}

// pythonCodeOf returns the compiled code of job's execute.py, compiling it on its first run in an
// instance of its own (nil when it cannot be: the run compiles the file, and reports whatever is
// wrong with it). The key is the text's sha256, which the run's version was checked to have; the
// compilation is metered on its own, not against the run's memory.
func pythonCodeOf(ctx context.Context, cache *Cache, job *Job) []byte {
	if cache == nil || job.Sum == "" {
		return nil
	}
	en, err := cache.Acquire(ctx, "py:"+job.Sum, nil, func(ctx context.Context) (Compiled, int64, error) {
		_, meter := apartFromTheRun(ctx, job) // CPython takes its allocator as an argument
		defer meter.Release()
		code, err := job.Interp.Py.Code(ctx, job.Dir, "", []byte(job.Code), maxBytecodeBytes/4, meter)
		return Compiled{Code: code}, int64(len(code)), err
	})
	if err != nil {
		return nil
	}
	defer cache.Release(en)
	return en.Value().Code
}
