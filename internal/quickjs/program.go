package quickjs

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/tetratelabs/wazero/sys"
)

// exitMark starts a program's exit on fd 1: "\x04" + its code. The host stops the instance
// there (see run.line).
const exitMark = 0x04

// writeMark starts a program's write on fd 1: "\x02" + {"fd": 1 or 2, "data": text}. Unlike a
// print, it carries its bytes as they are (no newline added), so process.stdout.write("a")
// writes "a".
const writeMark = 0x02

// program runs p.Source as a program (see Program.Script): its set-up, its top-level code, its
// jobs; then reads its exit code.
func (r *run) program(ctx context.Context, p Program, seed [16]byte) (Result, error) {
	g := r.g
	argv, _ := json.Marshal(append([]string{}, p.Argv...)) // [], never null
	stdin, _ := json.Marshal(string(p.Stdin))
	name, _ := json.Marshal(p.Script)
	steps := []struct{ code, file string }{
		{seedCall(seed) + ";__program(" + string(name) + "," + string(argv) + "," + string(stdin) + ")", "skillbox:program.js"},
		{p.Source, p.Script},
	}
	code := 0
	exited := r.untilExit(func() {
		for i, s := range steps {
			if i == 1 && p.Bytecode != nil {
				if ex := g.evalBytecode(ctx, p.Bytecode); ex != nil {
					code = r.uncaught(ex)
				}
				break
			}
			v, ex := g.eval(ctx, s.code, s.file)
			if ex != nil {
				code = r.uncaught(ex)
				break
			}
			g.free(ctx, v)
		}
		if code == 0 {
			if ex := g.drain(ctx); ex != nil {
				code = r.uncaught(ex)
			}
		}
	})
	r.flush()
	if exited {
		// The instance stopped inside process.exit: nothing more is read from it.
		return Result{ExitCode: *r.exit, Stdout: r.std[0].b, Stderr: r.std[1].b, StdoutDropped: r.std[0].dropped,
			StderrDropped: r.std[1].dropped, HostCalls: r.broker.Calls, DroppedLines: r.dropped}, nil
	}
	if code < 0 {
		// Not an exit: the interpreter ran out of memory (or the run trapped); the run fails.
		return Result{}, r.lastErr
	}
	if code == 0 {
		// An exit from a job (an async function), else process.exitCode, as Node reads it when
		// the program ends without process.exit.
		v, ex := g.eval(ctx, "String(globalThis.__exited ?? (globalThis.process.exitCode|0))", "skillbox:exit.js")
		if ex == nil {
			_ = json.Unmarshal([]byte(g.toString(ctx, v)), &code)
			g.free(ctx, v)
		}
	}
	return Result{ExitCode: code, Stdout: r.std[0].b, Stderr: r.std[1].b, StdoutDropped: r.std[0].dropped,
		StderrDropped: r.std[1].dropped, HostCalls: r.broker.Calls, DroppedLines: r.dropped}, nil
}

// exitName is the name of the error process.exit throws to end a program; its message is the
// exit code.
const exitName = "SkillboxExit"

// uncaught turns an exception that ended a program into its exit code: process.exit's, else 1
// with the error on stderr, as Node prints it; -1 for one that fails the run itself (out of
// memory), kept in lastErr.
func (r *run) uncaught(ex *jsException) int {
	if ex.name == exitName {
		code, _ := strconv.Atoi(ex.message)
		return code
	}
	e := ex.asError()
	if e.Kind == scripterr.MemoryLimit {
		r.lastErr = e
		return -1
	}
	msg := ex.message
	if ex.name != "" {
		msg = ex.name + ": " + msg
	}
	if ex.stack != "" {
		msg += "\n" + ex.stack
	}
	r.std[1].write(r.lim.maxOutput(), msg+"\n")
	return 1
}

// untilExit runs f, and reports whether the program's process.exit stopped the instance in it
// (run.exit holds the code): the guest's call ends with the *sys.ExitError the host raised.
func (r *run) untilExit(f func()) (exited bool) {
	defer func() {
		if p := recover(); p != nil {
			var ee *sys.ExitError
			if gf, ok := p.(guestFault); ok && r.exit != nil && errors.As(gf.err, &ee) {
				exited = true
				return
			}
			panic(p)
		}
	}()
	f()
	return false
}
