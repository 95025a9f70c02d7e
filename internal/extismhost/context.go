package extismhost

import (
	"context"
	"sync"

	"github.com/skillbox-dev/skillbox/hostfuncs"
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

func runFrom(ctx context.Context) *run {
	r, _ := ctx.Value(ctxKey{}).(*run)
	return r
}
