package extismhost

import (
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillbox-dev/skillbox/internal/kernel"
)

// ErrGuestFault is matched by every [*GuestFault].
var ErrGuestFault = kernel.ErrFault

// GuestFault is a guest handing a host function an offset that is not a live memory block: the
// kernel's fault, raised with Host set.
type GuestFault = kernel.Fault

// errTooLarge is a live block longer than the call accepts: the guest gets INVALID, not a trap,
// since the block itself is fine.
var errTooLarge = errors.New("argument too large")

// Memory is the part of guest memory a host function touches: Extism blocks. It is an interface so
// the functions can be tested and fuzzed without a module.
type Memory interface {
	// Block returns a copy of the block at offset, or an error if offset is not a live block or
	// the block is longer than max bytes (an error matching errTooLarge). Offset 0 is the empty
	// block.
	Block(ctx context.Context, offset uint64, max int64) ([]byte, error)
	// Alloc copies data into a new block and returns its offset.
	Alloc(ctx context.Context, data []byte) (uint64, error)
}

// kernelMemory is Memory over a running Extism plugin's kernel. It holds the kernel's length and
// alloc functions for the whole run: Extism's CurrentPlugin looks them up on every call, and each
// lookup makes wazero allocate a fresh call stack, which dominated the cost of a host call.
type kernelMemory struct {
	module api.Module // whose functions these are: a Call used by another instance re-resolves
	mem    api.Memory
	length api.Function
	alloc  api.Function
}

// kernel returns the run's kernelMemory, made on the first host call. Extism puts the kernel
// module in the call's context; a guest is single-threaded, so the functions are never shared.
func (r *run) kernel(ctx context.Context, p *extism.CurrentPlugin) (*kernelMemory, error) {
	mod, ok := ctx.Value(extism.PluginCtxKey("extism")).(api.Module)
	if !ok {
		return nil, errors.New("no Extism kernel in the call's context")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.km != nil && r.km.module == mod {
		return r.km, nil
	}
	length, alloc := mod.ExportedFunction("length"), mod.ExportedFunction("alloc")
	if length == nil || alloc == nil {
		return nil, errors.New("the Extism kernel lacks length or alloc")
	}
	r.km = &kernelMemory{module: mod, mem: p.Memory(), length: length, alloc: alloc}
	return r.km, nil
}

func (m *kernelMemory) Block(ctx context.Context, offset uint64, max int64) ([]byte, error) {
	if offset == 0 {
		return nil, nil
	}
	res, err := m.length.Call(ctx, offset)
	if err != nil {
		return nil, err
	}
	n := res[0]
	// The kernel answers 0 for an offset that does not start a live block; a live block of 0
	// bytes is never handed out (alloc(0) returns 0).
	if n == 0 {
		return nil, errors.New("not a live memory block")
	}
	if int64(n) > max || n > 1<<32 {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errTooLarge, n, max)
	}
	if offset > 1<<32 {
		return nil, errors.New("offset outside memory")
	}
	b, okRead := m.mem.Read(uint32(offset), uint32(n))
	if !okRead {
		return nil, errors.New("block outside memory")
	}
	return append([]byte(nil), b...), nil
}

func (m *kernelMemory) Alloc(ctx context.Context, data []byte) (uint64, error) {
	res, err := m.alloc.Call(ctx, uint64(len(data)))
	if err != nil {
		return 0, err
	}
	off := res[0]
	if off == 0 && len(data) > 0 {
		return 0, errors.New("guest memory exhausted")
	}
	if len(data) > 0 && !m.mem.Write(uint32(off), data) {
		return 0, errors.New("reply block outside memory")
	}
	return off, nil
}
