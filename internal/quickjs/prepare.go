package quickjs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	quickjswasi "github.com/aperturerobotics/go-quickjs-wasi-reactor"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

// Prepared is a skill's bundle evaluated once, in an instance restored from its Compiled's
// snapshot, and kept as the memory pages that evaluation changed. A run of it (Program.Prepared)
// restores the snapshot and those pages, and starts the skill with one call into the guest,
// which seeds Math.random and calls execute: the bundle is neither read nor evaluated again.
//
// The bundle's top-level code runs once, not once per run, so Prepare refuses a bundle whose
// top level does anything a run must do afresh: read a clock or Math.random, draw randomness,
// write output or call the SkillContext ([ErrImpure]). It ends the top level at the first of
// them, so that its first run does not evaluate a long one twice. Such a skill runs from its
// bytecode, as before. What the top level builds (tables, classes, compiled regular
// expressions) is every run's starting state, as each run's own evaluation of it would be; each
// run starts from a fresh copy, so no run sees another's changes.
type Prepared struct {
	base  *snapshot
	size  uint32      // the memory's length in bytes
	pages []imagePage // what differs from base.mem (or from zero past it)
	bytes int64       // the pages' bytes, for Size
	// fn is the prelude's __go, glob the global object: values held in the restored memory.
	fn, glob           uint64
	replyBuf, replyCap uint32
}

// imagePage is one page of a Prepared's memory at off.
type imagePage struct {
	off uint32
	b   []byte
}

// Size is the memory p holds: what a cache charges for keeping it.
func (p *Prepared) Size() int64 { return p.bytes + int64(len(p.pages))*16 + 64 }

// ErrTooLarge is Prepare's refusal of a bundle whose top level changed more memory than the
// caller would keep: its runs evaluate it themselves.
var ErrTooLarge = errors.New("quickjs: the bundle's prepared memory is larger than the bound")

// ErrImpure is Prepare's refusal of a bundle whose top level reads a clock, Math.random or the
// system's randomness, or writes output or calls the SkillContext: each run must do that itself.
var ErrImpure = errors.New("quickjs: the bundle's top level reads the clock or randomness, or talks to the host")

// imagePageSize is the granularity at which Prepare compares a skill's memory with the snapshot.
const imagePageSize = 4096

// replyInitial is the guest buffer Prepare allocates for a run's input and the host's replies.
const replyInitial = 4096

// Prepare evaluates code (bytecode of a bundle, from [Compiled.Bytecode]) in an instance of c
// restored from its snapshot, and keeps what that changed (see Prepared), at most max bytes of
// it. The evaluation runs under ctx (its deadline stops it) and the memory allocator ctx
// carries, if any.
//
// # Errors
//
// ErrImpure for a bundle whose top level must run in each run, ErrTooLarge for one that changed
// more than max bytes of memory; an *scripterr.Error when the top level throws, runs out of
// memory or does not finish before ctx ends (KindTimeout); any other error is the host's. The
// caller runs the skill from its bytecode after any of them.
func (c *Compiled) Prepare(ctx context.Context, code []byte, max int64) (*Prepared, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if c.snap == nil {
		return nil, errors.New("quickjs: preparing a skill needs the snapshot")
	}
	watch := &impurity{}
	r := &run{preparing: true}
	ctx = context.WithValue(ctx, runKey{}, r)
	m, err := c.runtime.InstantiateModule(ctx, c.module, watchedConfig(watch).WithStartFunctions())
	if err != nil {
		if ctx.Err() != nil {
			return nil, &scripterr.Error{Kind: scripterr.Timeout, Message: "the deadline passed while starting QuickJS", Err: ctx.Err()}
		}
		return nil, fmt.Errorf("quickjs: instantiate the reactor: %w", err)
	}
	defer m.Close(context.Background())
	defer interrupt.StopWhenDone(ctx, m)()
	g := &guest{m: m, fns: map[string]api.Function{}}
	r.g = g
	var p *Prepared
	err = guarded(ctx, func() error {
		if err := c.snap.restore(m, g); err != nil {
			return trapError(ctx, err)
		}
		// The prelude's __go, taken before the bundle runs: a top level that replaces the global
		// does not replace what starts its runs.
		g.glob = g.call(ctx, "JS_GetGlobalObject", uint64(g.ctx))
		name := g.cstr(ctx, "__go")
		fn := g.call(ctx, "JS_GetPropertyStr", uint64(g.ctx), g.glob, uint64(name))
		if tag(fn) != quickjswasi.JSTagObject {
			return errors.New("quickjs: the prelude defines no __go")
		}
		ex := g.evalBytecode(ctx, code)
		if watch.touched || r.wrote {
			return ErrImpure
		}
		if ex != nil {
			return ex.asError()
		}
		buf := uint32(g.call(ctx, "malloc", replyInitial))
		if buf == 0 {
			return &scripterr.Error{Kind: scripterr.MemoryLimit, Message: "out of memory"}
		}
		if p = c.snap.diff(m.Memory()); p.bytes > max {
			return ErrTooLarge
		}
		p.fn, p.glob, p.replyBuf, p.replyCap = fn, g.glob, buf, replyInitial
		return nil
	})
	if watch.touched || r.wrote { // stopped there, or during the calls after the check
		return nil, ErrImpure
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// impurity records that the instance being prepared read a clock or randomness, and ends its
// call there (a panic in a host function unwinds the guest, as a program's exit does): its top
// level must run in every run, and need not run to its end here (a long one would cost its first
// run twice). It never calls interrupt.Stop, which the deadline's goroutine may call at the same
// moment.
type impurity struct{ touched bool }

func (w *impurity) touch() {
	w.touched = true
	panic(ErrImpure)
}

// watchedConfig is moduleConfig with clocks and randomness that w watches.
func watchedConfig(w *impurity) wazero.ModuleConfig {
	wall := func() (int64, int32) {
		w.touch()
		t := time.Now()
		return t.Unix(), int32(t.Nanosecond())
	}
	start := time.Now()
	nano := func() int64 {
		w.touch()
		return int64(time.Since(start))
	}
	return moduleConfig().WithWalltime(wall, sys.ClockResolution(1)).WithNanotime(nano, sys.ClockResolution(1)).
		WithRandSource(watchedReader{w})
}

type watchedReader struct{ w *impurity }

func (r watchedReader) Read(b []byte) (int, error) {
	r.w.touch()
	return io.ReadFull(randReader, b)
}

// diff is the memory mem holds as the pages that differ from s.
func (s *snapshot) diff(mem api.Memory) *Prepared {
	img, _ := mem.Read(0, mem.Size())
	p := &Prepared{base: s, size: uint32(len(img))}
	var zero [imagePageSize]byte
	for off := 0; off < len(img); off += imagePageSize {
		end := min(off+imagePageSize, len(img))
		was := zero[:end-off]
		if off < len(s.mem) {
			was = s.mem[off:min(end, len(s.mem))]
			if len(was) < end-off { // the snapshot ends inside this page: zero after it
				was = append(append([]byte(nil), was...), zero[:end-off-len(was)]...)
			}
		}
		if !bytes.Equal(img[off:end], was) {
			p.pages = append(p.pages, imagePage{off: uint32(off), b: append([]byte(nil), img[off:end]...)})
			p.bytes += int64(end - off)
		}
	}
	return p
}

// restore writes p into m, a fresh instance whose start functions did not run, and points g at
// the restored runtime, context and buffers.
func (p *Prepared) restore(m api.Module, g *guest) error {
	mem := m.Memory()
	if p.size > mem.Size() {
		if _, ok := mem.Grow((p.size - mem.Size()) / 65536); !ok {
			return errOutOfMemory
		}
	}
	// The snapshot's bytes where no page of p replaces them, and p's pages, in order (diff makes
	// them in order): each byte is written once. Past the snapshot, memory is zero already.
	base, at := p.base.mem, 0
	for _, pg := range p.pages {
		if !writeRange(mem, base, at, int(pg.off)) || !mem.Write(pg.off, pg.b) {
			return errors.New("quickjs: restore a prepared skill: memory write out of range")
		}
		at = int(pg.off) + len(pg.b)
	}
	if !writeRange(mem, base, at, len(base)) {
		return errors.New("quickjs: restore a prepared skill: memory write out of range")
	}
	p.base.point(g)
	g.glob, g.replyBuf, g.replyCap = p.glob, p.replyBuf, p.replyCap
	return nil
}

// writeRange writes img[from:to] (to cut at img's end) at from in mem; nothing when it is empty.
func writeRange(mem api.Memory, img []byte, from, to int) bool {
	to = min(to, len(img))
	return from >= to || mem.Write(uint32(from), img[from:to])
}

// executePrepared runs a prepared skill: the prelude's __go, given the seed and the arguments
// in one string, seeds Math.random and calls execute (see the prelude's __drive).
func (r *run) executePrepared(ctx context.Context, p *Prepared, args []byte, seed [16]byte) (Result, error) {
	g := r.g
	in := append(make([]byte, 0, 32+len(args)), seedHex(seed)...)
	in = append(in, args...)
	buf := g.replyBuf
	if uint32(len(in)) > g.replyCap {
		if buf = uint32(g.call(ctx, "malloc", uint64(len(in)))); buf == 0 {
			panic(guestFault{errOutOfMemory})
		}
	}
	if !g.m.Memory().Write(buf, in) {
		panic(guestFault{errOutOfMemory})
	}
	s := g.call(ctx, "JS_NewStringLen", uint64(g.ctx), uint64(buf), uint64(len(in)))
	if tag(s) == quickjswasi.JSTagException {
		r.flush()
		return Result{}, g.exception(ctx).asError()
	}
	if !g.m.Memory().WriteUint64Le(g.scratch, s) {
		panic(guestFault{errOutOfMemory})
	}
	v := g.call(ctx, "JS_Call", uint64(g.ctx), p.fn, quickjswasi.JSValueUndefined, 1, uint64(g.scratch))
	if tag(v) == quickjswasi.JSTagException {
		r.flush()
		return Result{}, g.exception(ctx).asError()
	}
	return r.finish(ctx)
}

// seedHex is the seed as __go reads it: the generator's state (seedState), four words of eight
// hex digits each.
func seedHex(seed [16]byte) string {
	st := seedState(seed)
	return fmt.Sprintf("%08x%08x%08x%08x", st[0], st[1], st[2], st[3])
}
