package cpython

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/memimage"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

// Program is what one run runs: a skill's execute(args, ctx) (the default), or, when Script is
// set, one of its scripts as a program with argv and stdin.
type Program struct {
	// Dir is the skill's directory on the host, mounted read-only at /skill and put on sys.path
	// with /skill/lib (packages vendored there), so that its modules import one another.
	Dir string
	// Entry is the file that defines execute(args, ctx), relative to Dir ("execute.py" when
	// empty).
	Entry string
	// Args is the JSON value passed as execute's first argument; empty means None.
	Args json.RawMessage
	// Code, when set, is Entry's code as Compiled.Code compiled it from the file's text: the run
	// executes it and does not read the file. The caller keeps it for that text alone.
	Code []byte

	// Script, when set, runs this file (relative to Dir, e.g. "scripts/report.py") as
	// __main__ with sys.argv = [its guest path] + Argv and Stdin as its standard input; the
	// Result holds its exit code and output. Entry and Args are not used.
	Script string
	Argv   []string
	Stdin  []byte
	// Cwd is the script's working directory, where its relative paths lead (a guest path the
	// mounts provide, such as /tmp); "" or one that cannot be entered leaves it at /.
	Cwd string
	// Module, when set, runs Script as python3 -m Module would: Script is that module's file
	// (a package's __main__.py for a package), and the directory holding its top package goes
	// first on sys.path, so that its package's relative imports work.
	Module string
	// MergeStderr sends the script's stderr to its Stdout, interleaved as written.
	MergeStderr bool

	// FSConfig, when set, adds mounts to the run's file system (the policy's file grants, a
	// private /tmp) after the standard library and /skill, which it must leave in place.
	FSConfig func(wazero.FSConfig) wazero.FSConfig
	// Limits bounds the run beyond its context's deadline and the runtime's memory cap.
	Limits Limits
	// compile makes the run Compiled.Code's: Entry compiled, its code on standard output.
	compile bool
	// Memory makes the run's memory, which starts from the snapshot's image: the caller's
	// metered allocator. nil gives the run Go slices, unmetered. An allocator set on the run's
	// context is not used: the interpreter's memory must start from the image.
	Memory memimage.Allocator
}

// Limits bounds what a run may hand the host. The zero value of each field is its safe default.
type Limits struct {
	// HostCallTimeout bounds each SkillContext operation (default 10 s), inside the run's
	// deadline.
	HostCallTimeout time.Duration
	// MaxOutputBytes bounds output: of execute, the lines of print and tracebacks passed to the
	// host's Log (default 64 KiB, lines past it counted as dropped); of a script, each of Stdout
	// and Stderr (default 1 MiB, the rest counted in Result.StdoutDropped, StderrDropped).
	MaxOutputBytes int64
	// MaxRequestBytes bounds one SkillContext request (default 16 MiB): a longer one is refused
	// with LimitExceeded.
	MaxRequestBytes int
	// MaxResultBytes bounds execute's result as JSON (default 16 MiB).
	MaxResultBytes int64
}

func (l Limits) maxOutput() int64 {
	if l.MaxOutputBytes <= 0 {
		return 64 << 10
	}
	return l.MaxOutputBytes
}

func (l Limits) maxScriptOutput() int64 {
	if l.MaxOutputBytes <= 0 {
		return 1 << 20
	}
	return l.MaxOutputBytes
}

func (l Limits) maxRequest() int {
	if l.MaxRequestBytes <= 0 {
		return 16 << 20
	}
	return l.MaxRequestBytes
}

func (l Limits) maxResult() int64 {
	if l.MaxResultBytes <= 0 {
		return 16 << 20
	}
	return l.MaxResultBytes
}

// Result is a run that ended: execute's value, or a script's exit code and output.
type Result struct {
	// Value is execute's return value as JSON (null for None).
	Value json.RawMessage
	// ExitCode, Stdout and Stderr are a script's; StdoutDropped and StderrDropped count the
	// bytes past Limits.MaxOutputBytes.
	ExitCode                     int
	Stdout, Stderr               []byte
	StdoutDropped, StderrDropped int64
	// HostCalls counts the SkillContext operations the skill made; DroppedLines the output lines
	// of execute past Limits.MaxOutputBytes.
	HostCalls, DroppedLines int
}

type runKey struct{}

// run is the state of one run, reached from the host functions through the context.
type run struct {
	broker   broker.Broker
	lim      Limits
	pending  []byte // the reply call made and reply has not copied yet
	outcome  []byte // the driver's envelope, from done
	tooLarge int64  // the size of an outcome past Limits.MaxResultBytes
	outBytes int64
	dropped  int
	fatal    string // the interpreter's "Fatal Python error" line, if it printed one
}

// Run runs p in a fresh instance of c, never reused, with h as its SkillContext. The run ends
// with ctx: wazero closes the instance at the deadline, and a time.sleep ends there too.
//
// # Errors
//
// An *Error when the run failed (see Kind): a ctx that ends before the skill does, already done
// included, is KindTimeout, and the *Error unwraps to ctx.Err(). A script that raises or exits
// non-zero is not an error: its Result says so (an uncaught MemoryError is, as KindMemoryLimit).
// Any other error is the caller's or the host's: ErrClosed, a Program field that is not valid
// (named in the message), the interpreter failing to instantiate.
func Run(ctx context.Context, c *Compiled, p Program, h broker.Host) (Result, error) {
	if c.closed.Load() {
		return Result{}, ErrClosed
	}
	argv, err := argvOf(&p)
	if err != nil {
		return Result{}, err
	}
	fsc, release, err := c.mounts(&p)
	if err != nil {
		return Result{}, err
	}
	defer release()
	r := &run{broker: broker.Broker{Host: h, Timeout: p.Limits.HostCallTimeout}, lim: p.Limits}
	cfg := wazero.NewModuleConfig().WithName("").WithArgs(argv...).WithFSConfig(fsc).
		WithSysWalltime().WithNanotime(nanotime, 1).WithRandSource(rand.Reader)
	var stdout, stderr *capturedOutput
	var logOut, logErr *logOutput
	if p.Script != "" || p.compile {
		stdout = &capturedOutput{r: r, max: p.Limits.maxScriptOutput()}
		stderr = &capturedOutput{r: r, max: p.Limits.maxScriptOutput(), stderr: true}
		errOut := stderr
		if p.MergeStderr {
			errOut, stdout.stderr = stdout, true // the interpreter's fatal errors come there too
		}
		cfg = cfg.WithStdin(bytes.NewReader(p.Stdin)).WithStdout(stdout).WithStderr(errOut)
	} else {
		if p.Code != nil {
			cfg = cfg.WithStdin(bytes.NewReader(p.Code))
		}
		logOut = &logOutput{r: r, source: "stdout", level: "info"}
		logErr = &logOutput{r: r, source: "stderr", level: "error", isStderr: true}
		cfg = cfg.WithStdout(logOut).WithStderr(logErr)
	}
	m, err := start(c.memoryFor(context.WithValue(ctx, runKey{}, r), p.Memory), c, cfg)
	if m != nil {
		_ = m.Close(context.Background())
	}
	if logOut != nil {
		logOut.flush()
		logErr.flush()
	}
	res := Result{HostCalls: r.broker.Calls, DroppedLines: r.dropped}
	if stdout != nil {
		res.Stdout, res.StdoutDropped = stdout.buf.Bytes(), stdout.dropped
		res.Stderr, res.StderrDropped = stderr.buf.Bytes(), stderr.dropped
	}
	return r.result(ctx, p.Script != "", res, err)
}

// start instantiates the interpreter with cfg and runs its _start, as wazero runs a start
// function (an exit with status 0 is no error), but itself: a trap on the call stack's bound is
// told from the instance before it is closed (interrupt.StackOverflow), and the instance is
// stopped when ctx ends (interrupt.Stop: it traps at its next function entry or loop iteration).
func start(ctx context.Context, c *Compiled, cfg wazero.ModuleConfig) (api.Module, error) {
	m, err := c.runtime.InstantiateModule(ctx, c.module, cfg.WithStartFunctions())
	if err != nil {
		return m, err
	}
	entry := m.ExportedFunction("_start")
	if entry == nil {
		return m, errors.New("cpython: the interpreter exports no _start")
	}
	defer interrupt.StopWhenDone(ctx, m)()
	if _, err = entry.Call(ctx); err != nil {
		if exit, ok := err.(*sys.ExitError); ok && exit.ExitCode() == 0 {
			return m, nil
		}
		err = interrupt.StackOverflow(m, err)
	}
	return m, err
}

// argvOf is the interpreter's WASI argv for p: the driver's mode, the guest path, then execute's
// arguments as JSON or the script's argv.
func argvOf(p *Program) ([]string, error) {
	if p.Script != "" {
		path, err := skillFile("Script", p.Script)
		if err != nil {
			return nil, err
		}
		for i, a := range p.Argv {
			if strings.IndexByte(a, 0) >= 0 {
				return nil, fmt.Errorf("cpython: Program.Argv[%d] holds a NUL byte, which no program argument can", i)
			}
		}
		if strings.IndexByte(p.Cwd, 0) >= 0 {
			return nil, errors.New("cpython: Program.Cwd holds a NUL byte")
		}
		if p.Module != "" {
			if err := checkModule(p.Module, p.Script); err != nil {
				return nil, err
			}
			return append([]string{"python3", "module", path, p.Cwd, p.Module}, p.Argv...), nil
		}
		return append([]string{"python3", "script", path, p.Cwd}, p.Argv...), nil
	}
	entry := p.Entry
	if entry == "" {
		entry = "execute.py"
	}
	path, err := skillFile("Entry", entry)
	if err != nil {
		return nil, err
	}
	args := p.Args
	if len(args) == 0 {
		args = json.RawMessage("null")
	}
	if !json.Valid(args) {
		return nil, errors.New("cpython: Program.Args is not valid JSON")
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, args) // valid: no NUL survives (JSON escapes control characters)
	switch {
	case p.compile:
		return []string{"python3", "compile", path}, nil
	case p.Code != nil:
		return []string{"python3", "execute", path, compact.String(), "code"}, nil
	}
	return []string{"python3", "execute", path, compact.String()}, nil
}

// maxResultDepth is the deepest the driver's envelope may nest, the result one level in it:
// encoding/json's own limit, which every reader of a result on the host meets.
const maxResultDepth = 10000

// jsonDepth is how deep the JSON text b nests (arrays and objects), strings skipped.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// outcome is the driver's envelope (skillbox._main).
type outcome struct {
	OK      bool            `json:"ok"`
	Result  json.RawMessage `json:"result"`
	Exit    int             `json:"exit"`
	Kind    string          `json:"kind"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
	// Syntax is set when the run ended in a SyntaxError: where it is (driver's _failure).
	Syntax *scripterr.Syntax `json:"syntax"`
}

// result reads how the run ended: the driver's outcome when it reported one, else the exit or
// trap that ended the instance.
func (r *run) result(ctx context.Context, script bool, res Result, err error) (Result, error) {
	if ctx.Err() != nil && (err != nil || r.outcome == nil) {
		return res, &scripterr.Error{Kind: scripterr.Timeout, Message: "the run did not finish before its deadline", Err: ctx.Err()}
	}
	if r.tooLarge > 0 {
		return res, &scripterr.Error{Kind: scripterr.OutputLimit, Message: fmt.Sprintf("execute's result is %d bytes of JSON, more than the limit of %d", r.tooLarge, r.lim.maxResult())}
	}
	if r.outcome == nil {
		return r.abnormal(script, res, err)
	}
	var o outcome
	if jerr := json.Unmarshal(r.outcome, &o); jerr != nil {
		if d := jsonDepth(r.outcome); d > maxResultDepth {
			// The driver wrote the skill's value as it was: a value no JSON reader takes is the
			// skill's error, not the host's.
			return res, &scripterr.Error{Kind: scripterr.SkillError, Name: "ValueError",
				Message: fmt.Sprintf("execute's result is nested %d levels deep; a result may nest at most %d", d-1, maxResultDepth-1)}
		}
		return res, fmt.Errorf("cpython: the driver's outcome: %w", jerr)
	}
	switch {
	case o.OK && script:
		res.ExitCode = o.Exit
		return res, nil
	case o.OK:
		res.Value = o.Result
		return res, nil
	case o.Kind == "memory_limit":
		return res, &scripterr.Error{Kind: scripterr.MemoryLimit, Name: o.Type, Message: orDefault(o.Message, "out of memory")}
	case script:
		res.ExitCode = 1 // python3 exits 1 on an uncaught exception; the traceback is in Stderr
		return res, nil
	case o.Kind == "permission_denied":
		return res, &scripterr.Error{Kind: scripterr.PermissionDenied, Name: o.Type, Message: o.Message}
	}
	return res, &scripterr.Error{Kind: scripterr.SkillError, Name: o.Type, Message: o.Message, Syntax: o.Syntax}
}

// abnormal types a run that ended without the driver's outcome: the skill called os._exit, or
// the interpreter aborted (a fatal error) or trapped.
func (r *run) abnormal(script bool, res Result, err error) (Result, error) {
	var exit *sys.ExitError
	switch {
	case err == nil || errors.As(err, &exit) && r.fatal == "":
		code := 0
		if exit != nil {
			code = int(exit.ExitCode())
		}
		if script {
			res.ExitCode = code
			return res, nil
		}
		return res, &scripterr.Error{Kind: scripterr.SkillError, Message: fmt.Sprintf("the skill exited (status %d) before execute returned", code), Err: err}
	case strings.Contains(strings.ToLower(r.fatal), "memory"):
		return res, &scripterr.Error{Kind: scripterr.MemoryLimit, Message: "out of memory: " + r.fatal, Err: err}
	case r.fatal != "":
		return res, &scripterr.Error{Kind: scripterr.SkillError, Message: "the interpreter aborted: " + r.fatal, Err: err}
	}
	msg := err.Error()
	if strings.Contains(msg, "out of bounds memory access") || strings.Contains(msg, "stack overflow") {
		return res, &scripterr.Error{Kind: scripterr.SkillError, Name: "RecursionError", Message: "stack overflow: recursion too deep for the interpreter's stack", Err: err}
	}
	return res, &scripterr.Error{Kind: scripterr.SkillError, Message: "the interpreter trapped: " + msg, Err: err}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
