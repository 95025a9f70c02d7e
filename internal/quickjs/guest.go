package quickjs

import (
	"context"
	"fmt"

	quickjswasi "github.com/aperturerobotics/go-quickjs-wasi-reactor"
	"github.com/tetratelabs/wazero/api"
)

// guest is one instance of the reactor with its JSRuntime and JSContext: calls into the QuickJS
// C API by export name. A failed call (a trap, the context ending) panics with a guestFault,
// which the run recovers into its error: the calls nest (fd_write calls back in), and threading
// the error through every level would hide the few places that decide anything.
type guest struct {
	m         api.Module
	fns       map[string]api.Function
	rt, ctx   uint32
	scratch   uint32 // 16 bytes of guest memory for out-parameters
	replyName uint32 // "__reply\0"
	// glob is the global object, replyBuf a buffer of replyCap bytes for replies: made on the
	// first reply of a run and never freed (the instance is thrown away after the run), so a
	// reply costs two calls into the guest, not six.
	glob               uint64
	replyBuf, replyCap uint32
}

type guestFault struct{ err error }

func (g *guest) call(ctx context.Context, name string, args ...uint64) uint64 {
	f := g.fns[name]
	if f == nil {
		if f = g.m.ExportedFunction(name); f == nil {
			panic(guestFault{fmt.Errorf("the reactor exports no %s", name)})
		}
		g.fns[name] = f
	}
	res, err := f.Call(ctx, args...)
	if err != nil {
		panic(guestFault{err})
	}
	if len(res) > 0 {
		return res[0]
	}
	return 0
}

// cstr copies s into guest memory, NUL-terminated; the caller frees it.
func (g *guest) cstr(ctx context.Context, s string) uint32 {
	p := uint32(g.call(ctx, "malloc", uint64(len(s)+1)))
	if p == 0 || !g.m.Memory().Write(p, append([]byte(s), 0)) {
		panic(guestFault{errOutOfMemory})
	}
	return p
}

func tag(v uint64) int32 { return int32(v >> 32) }

// eval evaluates code as a global script. A JavaScript exception is returned as a *jsException.
func (g *guest) eval(ctx context.Context, code, filename string) (uint64, *jsException) {
	cp := g.cstr(ctx, code)
	fp := g.cstr(ctx, filename)
	v := g.call(ctx, "JS_Eval", uint64(g.ctx), uint64(cp), uint64(len(code)), uint64(fp), 0)
	g.call(ctx, "free", uint64(cp))
	g.call(ctx, "free", uint64(fp))
	if tag(v) == quickjswasi.JSTagException {
		return 0, g.exception(ctx)
	}
	return v, nil
}

func (g *guest) free(ctx context.Context, v uint64) {
	g.call(ctx, "JS_FreeValue", uint64(g.ctx), v)
}

// jsException is a pending JavaScript exception, read out.
type jsException struct{ name, message, stack string }

func (g *guest) exception(ctx context.Context) *jsException {
	ex := g.call(ctx, "JS_GetException", uint64(g.ctx))
	defer g.free(ctx, ex)
	e := &jsException{message: g.toString(ctx, ex)}
	if tag(ex) == quickjswasi.JSTagObject {
		e.name = g.prop(ctx, ex, "name")
		e.message = g.prop(ctx, ex, "message")
		e.stack = g.prop(ctx, ex, "stack")
	}
	return e
}

// prop returns obj[name] as a string, "" when it is not a string.
func (g *guest) prop(ctx context.Context, obj uint64, name string) string {
	np := g.cstr(ctx, name)
	v := g.call(ctx, "JS_GetPropertyStr", uint64(g.ctx), obj, uint64(np))
	g.call(ctx, "free", uint64(np))
	defer g.free(ctx, v)
	if tag(v) != quickjswasi.JSTagString {
		return ""
	}
	return g.toString(ctx, v)
}

func (g *guest) toString(ctx context.Context, v uint64) string {
	p := uint32(g.call(ctx, "JS_ToCStringLen2", uint64(g.ctx), uint64(g.scratch), v, 0))
	if p == 0 {
		// Converting threw (a getter, out of memory): drop that exception.
		g.free(ctx, g.call(ctx, "JS_GetException", uint64(g.ctx)))
		return "<value not convertible to a string>"
	}
	n, _ := g.m.Memory().ReadUint32Le(g.scratch)
	b, _ := g.m.Memory().Read(p, n)
	s := string(b)
	g.call(ctx, "JS_FreeCString", uint64(g.ctx), uint64(p))
	return s
}

// drain runs the pending jobs (promise reactions) until none is left.
func (g *guest) drain(ctx context.Context) *jsException {
	for {
		r := int32(g.call(ctx, "JS_ExecutePendingJob", uint64(g.rt), uint64(g.scratch+8)))
		if r == 0 {
			return nil
		}
		if r < 0 {
			// JS_ExecutePendingJob stores the job's context at scratch+8; it is ours.
			return g.exception(ctx)
		}
	}
}

// setReply stores a bridge reply as globalThis.__reply: called from inside fd_write, before the
// prelude's print returns and reads it.
func (g *guest) setReply(ctx context.Context, reply []byte) {
	if uint32(len(reply)) > g.replyCap {
		if g.replyBuf != 0 {
			g.call(ctx, "free", uint64(g.replyBuf))
		}
		n := max(uint32(len(reply)), 4096)
		g.replyBuf, g.replyCap = uint32(g.call(ctx, "malloc", uint64(n))), n
		if g.replyBuf == 0 {
			g.replyCap = 0
			panic(guestFault{errOutOfMemory})
		}
	}
	if !g.m.Memory().Write(g.replyBuf, reply) {
		panic(guestFault{errOutOfMemory})
	}
	s := g.call(ctx, "JS_NewStringLen", uint64(g.ctx), uint64(g.replyBuf), uint64(len(reply)))
	if tag(s) == quickjswasi.JSTagException {
		return // out of memory: the prelude finds no reply and throws
	}
	if g.glob == 0 {
		g.glob = g.call(ctx, "JS_GetGlobalObject", uint64(g.ctx))
	}
	g.call(ctx, "JS_SetPropertyStr", uint64(g.ctx), g.glob, uint64(g.replyName), s) // takes s
}
