package quickjs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	quickjswasi "github.com/aperturerobotics/go-quickjs-wasi-reactor"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/tetratelabs/wazero/api"
)

// QuickJS flags (quickjs.h).
const (
	evalCompileOnly = 1 << 5 // JS_EVAL_FLAG_COMPILE_ONLY, with JS_EVAL_TYPE_GLOBAL (0)
	objBytecode     = 1 << 0 // JS_WRITE_OBJ_BYTECODE, JS_READ_OBJ_BYTECODE
)

// Bytecode compiles source, a bundle as Program.Source takes it, to QuickJS bytecode, in a fresh
// instance of c like a run's. A run given the bytecode (Program.Bytecode) reads it instead of
// parsing the source again: for a small skill that is most of a run's time inside the sandbox.
// The bytecode is this build's own (QuickJS reads only what its own version wrote) and is never
// read from anywhere but this process's memory. max bounds it (0: 16 MiB).
//
// # Errors
//
// An *Error of KindSkillError for a syntax error (Name "SyntaxError"), KindTimeout when ctx ends
// first, KindMemoryLimit when the interpreter runs out of memory; any other error is the host's.
func (c *Compiled) Bytecode(ctx context.Context, source, filename string, max int) (code []byte, err error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if c.snap == nil {
		return nil, errors.New("quickjs: bytecode needs the snapshot")
	}
	if max <= 0 {
		max = 16 << 20
	}
	r := &run{}
	ctx = context.WithValue(ctx, runKey{}, r)
	m, err := c.runtime.InstantiateModule(ctx, c.module, moduleConfig().WithStartFunctions())
	if err != nil {
		if ctx.Err() != nil {
			return nil, &scripterr.Error{Kind: scripterr.Timeout, Message: "the deadline passed while starting QuickJS", Err: ctx.Err()}
		}
		return nil, fmt.Errorf("quickjs: instantiate the reactor: %w", err)
	}
	defer m.Close(context.Background())
	defer interrupt.StopWhenDone(ctx, m)() // the deadline (see Compile)
	r.g = &guest{m: m, fns: map[string]api.Function{}}
	err = guarded(ctx, func() error {
		if err := c.snap.restore(m, r.g); err != nil {
			return trapError(ctx, err)
		}
		g := r.g
		cp, fp := g.cstr(ctx, source), g.cstr(ctx, filename)
		fn := g.call(ctx, "JS_Eval", uint64(g.ctx), uint64(cp), uint64(len(source)), uint64(fp), evalCompileOnly)
		g.call(ctx, "free", uint64(cp))
		g.call(ctx, "free", uint64(fp))
		if tag(fn) == quickjswasi.JSTagException {
			return g.exception(ctx).asError()
		}
		defer g.free(ctx, fn)
		p := uint32(g.call(ctx, "JS_WriteObject", uint64(g.ctx), uint64(g.scratch), fn, objBytecode))
		if p == 0 {
			return &scripterr.Error{Kind: scripterr.MemoryLimit, Message: "out of memory writing the bytecode"}
		}
		defer g.call(ctx, "js_free", uint64(g.ctx), uint64(p))
		raw, ok := m.Memory().Read(g.scratch, 4) // size_t is 32 bits in wasm32
		if !ok {
			return errors.New("quickjs: read the bytecode's size")
		}
		n := binary.LittleEndian.Uint32(raw)
		if int(n) > max {
			return fmt.Errorf("quickjs: bytecode of %d bytes is more than %d", n, max)
		}
		b, ok := m.Memory().Read(p, n)
		if !ok {
			return errors.New("quickjs: read the bytecode")
		}
		code = append([]byte(nil), b...)
		return nil
	})
	return code, err
}

// evalBytecode reads code (see Bytecode) into g and runs it, as eval runs source.
func (g *guest) evalBytecode(ctx context.Context, code []byte) *jsException {
	p := uint32(g.call(ctx, "malloc", uint64(len(code))))
	if p == 0 || !g.m.Memory().Write(p, code) {
		panic(guestFault{errOutOfMemory})
	}
	fn := g.call(ctx, "JS_ReadObject", uint64(g.ctx), uint64(p), uint64(len(code)), objBytecode)
	g.call(ctx, "free", uint64(p))
	if tag(fn) == quickjswasi.JSTagException {
		return g.exception(ctx)
	}
	v := g.call(ctx, "JS_EvalFunction", uint64(g.ctx), fn) // takes fn
	if tag(v) == quickjswasi.JSTagException {
		return g.exception(ctx)
	}
	g.free(ctx, v)
	return nil
}
