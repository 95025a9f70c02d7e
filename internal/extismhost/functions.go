package extismhost

import (
	"context"
	"errors"
	"fmt"
	"strings"

	extism "github.com/extism/go-sdk"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// Functions returns the Skillbox host functions, to pass to extism.NewCompiledPlugin. They find
// their run's state in the call's context ([WithCall]); a call without one is refused.
func Functions() []extism.HostFunction {
	out := make([]extism.HostFunction, len(hostFunctions))
	for i, f := range hostFunctions {
		out[i] = define(f.name, f.params, f.results, f.h)
	}
	return out
}

// hostFunc is one host function of the ABI: its name, signature and handler.
type hostFunc struct {
	name            string
	params, results []extism.ValueType
	h               handler
}

const (
	i64 = extism.ValueTypeI64
	i32 = extism.ValueTypeI32
)

// hostFunctions are the ABI's functions (docs/abi.md §4).
var hostFunctions = []hostFunc{
	{"skillbox_fetch", []extism.ValueType{i64, i64}, []extism.ValueType{i64},
		func(ctx context.Context, c *hostfuncs.Call, mem Memory, stack []uint64) {
			head, bad := arg(ctx, c, mem, "skillbox_fetch", stack[0], maxRequestBytes)
			body, bad2 := arg(ctx, c, mem, "skillbox_fetch", stack[1], c.Grant.Limits.MaxFetchBytes)
			stack[0] = answer(ctx, c, mem, "skillbox_fetch", firstBad(bad, bad2, func() reply {
				req, err := hostfuncs.DecodeFetchRequest(head)
				if err != nil {
					return replyOf(nil, err)
				}
				req.Body = body
				return fetchReply(c.Fetch(ctx, req))
			}))
		}},
	{"skillbox_env", []extism.ValueType{i64}, []extism.ValueType{i64},
		func(ctx context.Context, c *hostfuncs.Call, mem Memory, stack []uint64) {
			name, bad := arg(ctx, c, mem, "skillbox_env", stack[0], hostfuncs.MaxNameBytes)
			stack[0] = answer(ctx, c, mem, "skillbox_env", firstBad(bad, nil, func() reply {
				v, err := c.Env(ctx, string(name))
				return replyOf([]byte(v), err)
			}))
		}},
	{"skillbox_read_file", []extism.ValueType{i64}, []extism.ValueType{i64},
		func(ctx context.Context, c *hostfuncs.Call, mem Memory, stack []uint64) {
			p, bad := arg(ctx, c, mem, "skillbox_read_file", stack[0], hostfuncs.MaxPathBytes)
			stack[0] = answer(ctx, c, mem, "skillbox_read_file", firstBad(bad, nil, func() reply {
				return replyOf(c.ReadFile(ctx, string(p)))
			}))
		}},
	{"skillbox_write_file", []extism.ValueType{i64, i64}, []extism.ValueType{i64},
		func(ctx context.Context, c *hostfuncs.Call, mem Memory, stack []uint64) {
			p, bad := arg(ctx, c, mem, "skillbox_write_file", stack[0], hostfuncs.MaxPathBytes)
			data, bad2 := arg(ctx, c, mem, "skillbox_write_file", stack[1], c.Grant.MaxWriteData())
			if bad2 != nil && bad == nil {
				bad2 = &reply{hostfuncs.StatusLimit, append([]byte("write: "), bad2.payload...)}
			}
			stack[0] = answer(ctx, c, mem, "skillbox_write_file", firstBad(bad, bad2, func() reply {
				return replyOf(nil, c.WriteFile(ctx, string(p), data))
			}))
		}},
	{"skillbox_log", []extism.ValueType{i32, i64}, nil,
		func(ctx context.Context, c *hostfuncs.Call, mem Memory, stack []uint64) {
			// A message over the whole log budget could never be kept: refuse to copy it.
			msg, bad := arg(ctx, c, mem, "skillbox_log", stack[1], c.Grant.Limits.MaxLogBytes)
			if bad != nil {
				c.DropLog()
				return
			}
			c.Log(hostfuncs.LevelName(int32(uint32(stack[0]))), "", string(msg))
		}},
}

type handler func(ctx context.Context, c *hostfuncs.Call, mem Memory, stack []uint64)

func define(name string, params, results []extism.ValueType, h handler) extism.HostFunction {
	f := extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		r := runFrom(ctx)
		if r == nil {
			panic(fmt.Errorf("host call %s outside a Skillbox run", name))
		}
		mem, err := r.kernel(ctx, p)
		if err != nil {
			panic(fmt.Errorf("host call %s: %w", name, err))
		}
		h(ctx, r.call, mem, stack)
	}, params, results)
	f.SetNamespace(Namespace)
	return f
}

// arg reads an argument block. A block too large for the call is answered INVALID (the returned
// reply); an offset that is no block stops the run with a GuestFault: panicking is how a wazero
// host function aborts the call, and the runtime recognises the fault by the Call's record.
func arg(ctx context.Context, c *hostfuncs.Call, mem Memory, fn string, off uint64, max int64) ([]byte, *reply) {
	b, err := mem.Block(ctx, off, max)
	if errors.Is(err, errTooLarge) {
		r := invalid("%s: %v", strings.TrimPrefix(fn, "skillbox_"), err)
		return nil, &r
	}
	if err != nil {
		f := &GuestFault{Host: true, Func: fn, Offset: off, Reason: err.Error()}
		c.SetFault(f)
		panic(f)
	}
	return b, nil
}

// firstBad answers the first argument problem, or runs do.
func firstBad(a, b *reply, do func() reply) reply {
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return do()
}

func answer(ctx context.Context, c *hostfuncs.Call, mem Memory, fn string, r reply) uint64 {
	off, err := mem.Alloc(ctx, r.encode())
	if err != nil {
		f := &GuestFault{Host: true, Func: fn, Reason: "cannot allocate the reply: " + err.Error()}
		c.SetFault(f)
		panic(f)
	}
	return off
}
