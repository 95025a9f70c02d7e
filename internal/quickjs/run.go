package quickjs

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/tetratelabs/wazero/api"
)

// Program is what one run evaluates.
type Program struct {
	// Source is the skill bundled as an IIFE script that defines the global __skill, whose
	// execute(args, ctx) (sync or async) is the entry point.
	Source string
	// Bytecode, when set, is Source compiled by [Compiled.Bytecode]: the run reads it instead of
	// parsing Source, which it then does not use.
	Bytecode []byte
	// Prepared, when set, is Bytecode evaluated by [Compiled.Prepare] of the same Compiled: the
	// run starts from it, and uses neither Source nor Bytecode. A program (Script) ignores it.
	Prepared *Prepared
	// Args is the JSON value passed as execute's first argument; empty means null.
	Args json.RawMessage

	// Script, when set, runs Source as a program named Script ("scripts/report.js") instead of
	// calling execute: its top-level code is the program, process.argv is ["qjs", Script,
	// ...Argv] (scriptArgs is [Script, ...Argv]), process.stdin.read() returns Stdin as text,
	// process.exit(code) ends it, and what it writes (print, console, process.stdout/stderr)
	// is the Result's Stdout and Stderr rather than the host's log. The SkillContext is the
	// global skillbox. An uncaught exception exits 1 with its stack on stderr.
	Script string
	Argv   []string
	Stdin  []byte

	// Limits bounds the run beyond its context's deadline and the runtime's memory cap.
	Limits Limits
}

// Limits bounds what a run may hand the host. The zero value of each field is its safe default.
type Limits struct {
	// HostCallTimeout bounds each SkillContext operation (default 10 s), inside the run's
	// deadline.
	HostCallTimeout time.Duration
	// MaxOutputBytes bounds the plain output (print, and anything written to fd 1 or 2 that is
	// not a request) passed to the host's Log (default 64 KiB); lines past it are counted as
	// dropped. For a program it bounds each of Stdout and Stderr, the bytes past it counted in
	// Result.StdoutDropped and StderrDropped.
	MaxOutputBytes int64
	// MaxLineBytes bounds one output line or request (default 16 MiB): a longer request is
	// refused with LimitExceeded, a longer output line cut.
	MaxLineBytes int
}

func (l Limits) maxOutput() int64 {
	if l.MaxOutputBytes <= 0 {
		return 64 << 10
	}
	return l.MaxOutputBytes
}

func (l Limits) maxLine() int {
	if l.MaxLineBytes <= 0 {
		return 16 << 20
	}
	return l.MaxLineBytes
}

// Result is a run that ended with a value.
type Result struct {
	// Value is execute's return value as JSON (null for undefined).
	Value json.RawMessage
	// HostCalls counts the SkillContext operations the skill made; DroppedLines the output lines
	// past Limits.MaxOutputBytes.
	HostCalls, DroppedLines int
	// ExitCode, Stdout and Stderr are a program's (see Program.Script).
	ExitCode                     int
	Stdout, Stderr               []byte
	StdoutDropped, StderrDropped int64
}

type runKey struct{}

// run is the state of one run, reached from fd_write through the context.
type run struct {
	broker   broker.Broker
	lim      Limits
	g        *guest
	lines    [2]lineBuf // fd 1, fd 2
	outBytes int64
	dropped  int
	// prog is set for a program: its output is kept in std (stdout, stderr), not logged.
	prog bool
	std  [2]capBuf
	// lastErr is what failed a program's run (out of memory), not an exit of its own.
	lastErr error
	// outcome is the driver's outcome line (the first one), outcomeOver set when it was longer
	// than Limits.MaxLineBytes.
	outcome     []byte
	outcomeOver bool
	// exit is the code a program's process.exit asked for; the host then stopped the instance.
	exit *int
	// preparing is set while Prepare evaluates a bundle's top level: a write (output or a
	// request) ends the call there, and wrote says one was tried.
	preparing, wrote bool
}

// capBuf is a program's stdout or stderr, cut at max bytes.
type capBuf struct {
	b       []byte
	dropped int64
}

func (c *capBuf) write(limit int64, p string) {
	room := limit - int64(len(c.b))
	if int64(len(p)) > room {
		c.b = append(c.b, p[:max(room, 0)]...)
		c.dropped += int64(len(p)) - max(room, 0)
		return
	}
	c.b = append(c.b, p...)
}

type lineBuf struct {
	b    []byte
	over bool
}

// randReader is crypto/rand's: the instances' WASI random_get and Math.random's seed.
var randReader = rand.Reader

var errOutOfMemory = errors.New("out of memory")

// thrownNull is the driver's message for an uncaught null.
const thrownNull = "uncaught object: null"

// memoryReserve is the linear memory kept out of the JavaScript heap limit: the C stack, the
// static data, malloc's own bookkeeping and the bridge's buffers. QuickJS then reports running
// out as a catchable InternalError before wasm memory runs out under it.
const memoryReserve = 2 << 20

// Run evaluates p in a fresh instance of c, never reused, with h as its SkillContext. The
// instance starts from c's snapshot of the set-up interpreter (see snapshot). The run ends with
// ctx: wazero closes the instance at the deadline.
//
// # Errors
//
// An *Error when the run failed (see Kind): a ctx that ends before the skill does, already done
// included, is KindTimeout, and the *Error unwraps to ctx.Err(). Any other error is the host's:
// ErrClosed, p.Args not JSON, the reactor failing to instantiate.
func Run(ctx context.Context, c *Compiled, p Program, h broker.Host) (res Result, err error) {
	if c.closed.Load() {
		return Result{}, ErrClosed
	}
	args := p.Args
	if len(args) == 0 {
		args = json.RawMessage("null")
	}
	if !json.Valid(args) {
		return Result{}, errors.New("quickjs: Program.Args is not valid JSON")
	}
	var seed [16]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return Result{}, fmt.Errorf("quickjs: seed Math.random: %w", err)
	}
	p.Args = args
	if p.Prepared != nil && (p.Prepared.base != c.snap || p.Script != "") {
		p.Prepared = nil // another Compiled's, or a program: run from the bytecode
	}
	return runWith(ctx, c, c.snap, p, h, seed)
}

// runWith is Run from snap, or without a snapshot when snap is nil.
func runWith(ctx context.Context, c *Compiled, snap *snapshot, p Program, h broker.Host, seed [16]byte) (res Result, err error) {
	lim := p.Limits
	r := &run{broker: broker.Broker{Host: h, Timeout: lim.HostCallTimeout}, lim: lim, prog: p.Script != ""}
	ctx = context.WithValue(ctx, runKey{}, r)
	cfg := moduleConfig().WithStartFunctions("_initialize")
	if snap != nil {
		cfg = cfg.WithStartFunctions()
	}
	m, err := c.runtime.InstantiateModule(ctx, c.module, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, &scripterr.Error{Kind: scripterr.Timeout, Message: "the run's deadline passed while starting QuickJS", Err: ctx.Err()}
		}
		return Result{}, fmt.Errorf("quickjs: instantiate the reactor: %w", err)
	}
	defer m.Close(context.Background())
	defer interrupt.StopWhenDone(ctx, m)() // the deadline (see Compile)
	r.g = &guest{m: m, fns: map[string]api.Function{}}
	err = guarded(ctx, func() error {
		if p.Prepared != nil {
			if err := p.Prepared.restore(m, r.g); err != nil {
				return trapError(ctx, err)
			}
		} else if snap != nil {
			if err := snap.restore(m, r.g); err != nil {
				return trapError(ctx, err)
			}
		} else if err := r.setup(ctx, c.pages); err != nil {
			return err
		}
		switch {
		case r.prog:
			res, err = r.program(ctx, p, seed)
		case p.Prepared != nil:
			res, err = r.executePrepared(ctx, p.Prepared, p.Args, seed)
		default:
			res, err = r.execute(ctx, p, seed)
		}
		return err
	})
	return res, err
}

// setup makes the JSRuntime and JSContext — the context with QuickJS's own intrinsics and
// print/console only (js_std_add_helpers), never std or os — and evaluates the prelude.
func (r *run) setup(ctx context.Context, pages uint32) error {
	g := r.g
	g.rt = uint32(g.call(ctx, "JS_NewRuntime"))
	if g.rt == 0 {
		return errors.New("quickjs: JS_NewRuntime failed")
	}
	limit := int64(pages)*65536 - int64(g.m.Memory().Size()) - memoryReserve
	limit = max(limit, 1<<20)
	limit = min(limit, 3<<30)
	g.call(ctx, "JS_SetMemoryLimit", uint64(g.rt), uint64(limit))
	g.ctx = uint32(g.call(ctx, "JS_NewContext", uint64(g.rt)))
	if g.ctx == 0 {
		return errors.New("quickjs: JS_NewContext failed")
	}
	g.call(ctx, "js_std_add_helpers", uint64(g.ctx), 0xffffffff, 0) // argc -1: no scriptArgs
	g.scratch = uint32(g.call(ctx, "malloc", 16))
	g.replyName = g.cstr(ctx, "__reply")
	v, ex := g.eval(ctx, prelude, "skillbox:prelude.js")
	if ex != nil {
		return fmt.Errorf("quickjs: the prelude failed: %s: %s", ex.name, ex.message)
	}
	g.free(ctx, v)
	return nil
}

// execute evaluates the prelude, the bundle and the driver, runs the jobs and reads the outcome.
func (r *run) execute(ctx context.Context, p Program, seed [16]byte) (Result, error) {
	g := r.g
	quoted, _ := json.Marshal(string(p.Args)) // a JSON string is a JavaScript string literal
	// From source, the seed is set in the bundle's own evaluation, before its first line runs (a
	// top-level Math.random is seeded) and on that line, so the skill's line numbers are
	// unchanged: one evaluation, each of which costs ~15 µs even when trivial, instead of two.
	// Bytecode is compiled from the bundle alone: the seed goes first, on its own.
	steps := []struct{ code, file string }{
		{seedCall(seed) + ";" + p.Source, "skill.js"},
		{driverCall(string(quoted)), "skillbox:driver.js"},
	}
	if p.Bytecode != nil {
		steps[0] = struct{ code, file string }{seedCall(seed), "skillbox:seed.js"}
	}
	for i, s := range steps {
		v, ex := g.eval(ctx, s.code, s.file)
		if ex != nil {
			r.flush()
			return Result{}, ex.asError()
		}
		g.free(ctx, v)
		if i == 0 && p.Bytecode != nil {
			if ex := g.evalBytecode(ctx, p.Bytecode); ex != nil {
				r.flush()
				return Result{}, ex.asError()
			}
		}
	}
	return r.finish(ctx)
}

// finish runs the jobs until execute's outcome is known, and reads it.
func (r *run) finish(ctx context.Context) (Result, error) {
	g := r.g
	if r.outcome == nil { // execute returned a promise: run the jobs until it settles
		if ex := g.drain(ctx); ex != nil {
			r.flush()
			return Result{}, ex.asError()
		}
	}
	r.flush()
	switch {
	case r.outcomeOver:
		return Result{}, &scripterr.Error{Kind: scripterr.OutputLimit, Message: fmt.Sprintf("execute's result is larger than %d bytes", r.lim.maxLine())}
	case r.outcome == nil:
		return Result{}, &scripterr.Error{Kind: scripterr.SkillError, Message: "execute returned a promise that never settled (nothing is left to resolve it: there are no timers)"}
	}
	var out struct {
		OK      bool            `json:"ok"`
		Result  json.RawMessage `json:"result"`
		Name    string          `json:"name"`
		Message string          `json:"message"`
		Stack   string          `json:"stack"`
	}
	if err := json.Unmarshal(r.outcome, &out); err != nil {
		return Result{}, fmt.Errorf("quickjs: the driver's envelope: %w", err)
	}
	if !out.OK {
		return Result{}, (&jsException{name: out.Name, message: out.Message, stack: out.Stack}).asError()
	}
	return Result{Value: out.Result, HostCalls: r.broker.Calls, DroppedLines: r.dropped}, nil
}

// asError types a JavaScript exception that ended the run.
func (e *jsException) asError() *scripterr.Error {
	k := scripterr.SkillError
	switch {
	case e.name == "PermissionDenied":
		k = scripterr.PermissionDenied
	case e.name == "InternalError" && e.message == "out of memory":
		k = scripterr.MemoryLimit
	case e.name == "" && e.message == thrownNull:
		// QuickJS throws null when it cannot allocate even the InternalError that reports running
		// out of memory. A skill that throws null itself is reported the same way.
		k, e.name, e.message = scripterr.MemoryLimit, "InternalError", "out of memory (the interpreter threw null: it could not allocate the error)"
	case e.name == "RangeError" && strings.Contains(e.message, "stack"):
		e.message = "stack overflow: recursion too deep (" + e.message + ")"
	}
	return &scripterr.Error{Kind: k, Name: e.name, Message: e.message, Stack: e.stack}
}

// trapError types a failed call into the guest: the context ended (timeout), memory could not
// grow, or the guest trapped; deep recursion ends on one of the two stack bounds Compile
// instruments (the C stack's and the wasm call stack's), or on a C stack run past the bottom of
// memory.
func trapError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &scripterr.Error{Kind: scripterr.Timeout, Message: "the run did not finish before its deadline", Err: ctx.Err()}
	}
	if r, _ := ctx.Value(runKey{}).(*run); r != nil && r.g != nil {
		err = interrupt.StackOverflow(r.g.m, err) // the call stack's bound, which Compile instruments
	}
	msg := err.Error()
	switch {
	case errors.Is(err, errOutOfMemory):
		return &scripterr.Error{Kind: scripterr.MemoryLimit, Message: "out of memory", Err: err}
	case strings.Contains(msg, "out of bounds memory access"), strings.Contains(msg, "stack overflow"):
		return &scripterr.Error{Kind: scripterr.SkillError, Name: "RangeError", Message: "stack overflow: recursion too deep for the interpreter's stack", Err: err}
	}
	return &scripterr.Error{Kind: scripterr.SkillError, Message: "the interpreter trapped: " + msg, Err: err}
}

// seedCall seeds the prelude's Math.random with 128 bits from crypto/rand (see seedState).
func seedCall(seed [16]byte) string {
	st := seedState(seed)
	return fmt.Sprintf("__seed(0x%x,0x%x,0x%x,0x%x)", st[0], st[1], st[2], st[3])
}

// seedState is the state of the prelude's sfc32 generator for seed: its four 32-bit words,
// then the 15 outputs sfc32's authors discard, drawn here rather than by 15 calls in the guest.
// Math.random's first value is the 16th output of the generator seeded with seed.
func seedState(seed [16]byte) [4]uint32 {
	a, b, c := binary.LittleEndian.Uint32(seed[0:]), binary.LittleEndian.Uint32(seed[4:]), binary.LittleEndian.Uint32(seed[8:])
	d := binary.LittleEndian.Uint32(seed[12:]) | 1
	for range 15 {
		t := a + b + d
		d++
		a = b ^ b>>9
		b = c + c<<3
		c = c<<21 | c>>11
		c += t
	}
	return [4]uint32{a, b, c, d}
}
