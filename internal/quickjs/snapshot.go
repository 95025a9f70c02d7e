package quickjs

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillbox-dev/skillbox/internal/leb128"
)

// snapshot is an instance's linear memory right after setup (JSRuntime, JSContext, helpers,
// prelude), with the guest pointers setup made. A run restores it into an instance made without
// running _initialize instead of doing the setup again (7-9x faster: see BenchmarkRun).
//
// It is sound because linear memory is the reactor's only state that setup changes: its one
// mutable global, __stack_pointer, is back at its initial value between calls (Compile checks
// there is no other), it imports no table or memory, and its tables are never written. What
// setup froze that must differ per run — Math.random's state — is seeded after the restore.
type snapshot struct {
	mem                         []byte
	rt, ctx, scratch, replyName uint32
}

// takeSnapshot instantiates c, runs the setup and copies the memory.
func takeSnapshot(ctx context.Context, c *Compiled) (*snapshot, error) {
	m, err := c.runtime.InstantiateModule(ctx, c.module, moduleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		return nil, err
	}
	defer m.Close(context.Background())
	r := &run{g: &guest{m: m, fns: map[string]api.Function{}}}
	ctx = context.WithValue(ctx, runKey{}, r)
	if err := guarded(ctx, func() error {
		if err := r.setup(ctx, c.pages); err != nil {
			return err
		}
		r.g.call(ctx, "JS_RunGC", uint64(r.g.rt))
		return nil
	}); err != nil {
		return nil, err
	}
	img, ok := m.Memory().Read(0, m.Memory().Size())
	if !ok {
		return nil, errors.New("read the instance's memory")
	}
	g := r.g
	return &snapshot{mem: append([]byte(nil), img...), rt: g.rt, ctx: g.ctx, scratch: g.scratch, replyName: g.replyName}, nil
}

// restore writes s into m, a fresh instance whose start functions did not run, and points g at
// the restored runtime and context.
func (s *snapshot) restore(m api.Module, g *guest) error {
	mem := m.Memory()
	if need := uint32(len(s.mem)); need > mem.Size() {
		if _, ok := mem.Grow((need - mem.Size()) / 65536); !ok {
			return errOutOfMemory
		}
	}
	if !mem.Write(0, s.mem) {
		return errors.New("quickjs: restore the snapshot: memory write out of range")
	}
	s.point(g)
	return nil
}

// point points g at the runtime, context and buffers setup made in s.
func (s *snapshot) point(g *guest) {
	g.rt, g.ctx, g.scratch, g.replyName = s.rt, s.ctx, s.scratch, s.replyName
}

// guarded runs f, turning a guestFault panic into its error.
func guarded(ctx context.Context, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			gf, ok := p.(guestFault)
			if !ok {
				panic(p)
			}
			err = trapError(ctx, gf.err)
		}
	}()
	return f()
}

// moduleConfig is every instance's configuration: anonymous (any number of instances), real
// clocks and crypto randomness (wazero's defaults are fakes), and nothing else: no arguments, no
// environment, no file system, no stdin.
func moduleConfig() wazero.ModuleConfig {
	return wazero.NewModuleConfig().WithName("").WithSysWalltime().WithSysNanotime().WithRandSource(randReader)
}

// mutableGlobals counts the mutable globals a module defines (its global section).
func mutableGlobals(wasm []byte) (int, error) {
	sec, err := globalSection(wasm)
	if err != nil || sec == nil {
		return 0, err
	}
	return countMutable(sec)
}

// stackPointer is the initial value of a module's first global, which must be a mutable i32
// set by an i32.const: the C stack pointer of a module wasm-ld linked.
func stackPointer(wasm []byte) (int32, error) {
	sec, err := globalSection(wasm)
	if err != nil {
		return 0, err
	}
	n, p, err := leb128.U32(sec, 0, len(sec))
	if err != nil || n == 0 || p+3 > len(sec) || sec[p] != 0x7f || sec[p+1] != 1 || sec[p+2] != 0x41 {
		return 0, errors.New("the first global is not a mutable i32 set by i32.const")
	}
	v, _, err := leb128.I32(sec, p+3, len(sec))
	return v, err
}

// globalSection is the content of a module's global section, nil when it has none.
func globalSection(wasm []byte) ([]byte, error) {
	for p := 8; p < len(wasm); {
		id := wasm[p]
		size, body, err := leb128.U32(wasm, p+1, len(wasm))
		if err != nil {
			return nil, err
		}
		end := body + int(size)
		if end > len(wasm) {
			return nil, errors.New("section past the end")
		}
		if id == 6 {
			return wasm[body:end], nil
		}
		p = end
	}
	return nil, nil
}

func countMutable(sec []byte) (int, error) {
	n, p, err := leb128.U32(sec, 0, len(sec))
	if err != nil {
		return 0, err
	}
	mutable := 0
	for i := uint32(0); i < n; i++ {
		if p+2 > len(sec) {
			return 0, errors.New("global section truncated")
		}
		if sec[p+1] == 1 {
			mutable++
		}
		p += 2
		// A constant expression: one instruction, then end (0x0b).
		if p >= len(sec) {
			return 0, errors.New("global section truncated")
		}
		op := sec[p]
		p++
		switch op {
		case 0x41, 0x42, 0x23, 0xd2: // i32.const, i64.const, global.get, ref.func: one LEB
			for p < len(sec) && sec[p]&0x80 != 0 {
				p++
			}
			p++
		case 0x43:
			p += 4
		case 0x44:
			p += 8
		case 0xd0:
			p++
		default:
			return 0, fmt.Errorf("global %d: initialiser opcode %#x not understood", i, op)
		}
		if p >= len(sec) || sec[p] != 0x0b {
			return 0, fmt.Errorf("global %d: initialiser is not one instruction", i)
		}
		p++
	}
	return mutable, nil
}

// Start instantiates the reactor and restores the snapshot — everything a run does before it
// evaluates anything — then closes the instance. It is the floor benchmarks measure a run
// against: a bare wazero instantiate plus the start of the same snapshot.
func (c *Compiled) Start(ctx context.Context) error {
	if c.snap == nil {
		return errors.New("quickjs: no snapshot")
	}
	m, err := c.runtime.InstantiateModule(ctx, c.module, moduleConfig().WithStartFunctions())
	if err != nil {
		return err
	}
	defer m.Close(context.Background())
	return c.snap.restore(m, &guest{m: m})
}
