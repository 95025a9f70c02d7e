package extismhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/kernel"
)

// WithKernel returns a context carrying c and the run's native kernel k, for the calls of a
// module instantiated on the native engine (see Instantiate). It is the kernel's context
// (kernel.With): the run rides on the kernel (Kernel.Host), one context value for both.
func WithKernel(ctx context.Context, c *hostfuncs.Call, k *kernel.Kernel) context.Context {
	k.Host = &run{call: c, mem: kernelBlocks{k}}
	return kernel.With(ctx, k)
}

// Instantiate adds the Skillbox host functions to r as the "extism:host/user" module, for the
// native engine: they find their run's Call and kernel in the call's context ([WithKernel]); a
// call without them is refused.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	b := r.NewHostModuleBuilder(Namespace)
	for _, f := range hostFunctions {
		h, name := f.h, f.name
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				r := runFrom(ctx)
				if r == nil || r.mem == nil {
					panic(fmt.Errorf("host call %s outside a Skillbox run", name))
				}
				h(ctx, r.call, r.mem, stack)
			}), f.params, f.results).
			WithName(name).
			Export(name)
	}
	return b.Instantiate(ctx)
}

// kernelBlocks is Memory over the native kernel's blocks: no wasm call, no lookup.
type kernelBlocks struct{ k *kernel.Kernel }

func (m kernelBlocks) Block(_ context.Context, offset uint64, max int64) ([]byte, error) {
	if offset == 0 {
		return nil, nil
	}
	b, ok := m.k.Bytes(offset)
	if !ok {
		return nil, errors.New("not a live memory block")
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errTooLarge, len(b), max)
	}
	// A copy: the operation may outlive the next allocation, which can move the arena.
	return append([]byte(nil), b...), nil
}

func (m kernelBlocks) Alloc(_ context.Context, data []byte) (uint64, error) {
	off := m.k.AllocBytes(data)
	if off == 0 && len(data) > 0 {
		return 0, errors.New("guest memory exhausted")
	}
	return off, nil
}
