package extismhost

import (
	"context"
	"sync"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/kernel"
)

// run is one run's state as the adapter sees it: the SkillContext and the kernel functions,
// looked up once per instance.
type run struct {
	call *hostfuncs.Call
	// mem is the native kernel's blocks (WithKernel); nil on the Extism engine, where the kernel
	// is found in the call's context on the first host call (km).
	mem Memory
	mu  sync.Mutex
	km  *kernelMemory
}

type ctxKey struct{}

// WithCall returns a context carrying c, for the plugin call whose host functions use it.
func WithCall(ctx context.Context, c *hostfuncs.Call) context.Context {
	return context.WithValue(ctx, ctxKey{}, &run{call: c})
}

// runFrom returns the run of a host call: on the native engine, the kernel's (WithKernel);
// on the Extism engine, the context's own (WithCall).
func runFrom(ctx context.Context) *run {
	if k := kernel.From(ctx); k != nil {
		if r, ok := k.Host.(*run); ok {
			return r
		}
	}
	r, _ := ctx.Value(ctxKey{}).(*run)
	return r
}
