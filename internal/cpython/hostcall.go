package cpython

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillbox-dev/skillbox/internal/broker"
)

// hostModule defines the functions the interpreter imports from "skillbox" (embed.c):
//
//	call(req_ptr, req_len: i32) -> reply_len: i32
//	    serves the JSON request at req_ptr through the run's broker and keeps the reply; -1 when
//	    the request is out of bounds (the guest raises)
//	reply(buf_ptr, buf_len: i32) -> n: i32
//	    copies the kept reply into buf (at most buf_len bytes) and forgets it
//	done(ptr, len: i32)
//	    the run's outcome, as the driver's JSON envelope
//
// Each finds its run through the context. A request longer than Limits.MaxRequestBytes is
// answered with a LimitExceeded reply without being read.
func hostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	i32 := api.ValueTypeI32
	b := r.NewHostModuleBuilder("skillbox")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostCall), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len").Export("call")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostReply), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buf_ptr", "buf_len").Export("reply")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostDone), []api.ValueType{i32, i32}, []api.ValueType{}).
		WithParameterNames("ptr", "len").Export("done")
	return b
}

func runOf(ctx context.Context) *run {
	r, _ := ctx.Value(runKey{}).(*run)
	return r
}

func hostCall(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	r := runOf(ctx)
	if r == nil {
		stack[0] = api.EncodeI32(-1)
		return
	}
	if int64(n) > int64(r.lim.maxRequest()) {
		r.pending = broker.TooLarge(r.lim.maxRequest())
	} else {
		req, ok := m.Memory().Read(ptr, n)
		if !ok {
			stack[0] = api.EncodeI32(-1)
			return
		}
		r.pending = r.broker.ServeJSON(ctx, req)
	}
	stack[0] = api.EncodeI32(int32(len(r.pending)))
}

func hostReply(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	r := runOf(ctx)
	if r == nil {
		stack[0] = 0
		return
	}
	out := r.pending
	if uint32(len(out)) > n {
		out = out[:n]
	}
	r.pending = nil
	if !m.Memory().Write(ptr, out) {
		stack[0] = 0
		return
	}
	stack[0] = api.EncodeI32(int32(len(out)))
}

func hostDone(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	r := runOf(ctx)
	if r == nil || r.outcome != nil {
		return
	}
	if int64(n) > r.lim.maxResult() {
		r.tooLarge = int64(n)
		r.outcome = []byte{}
		return
	}
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		return
	}
	r.outcome = append([]byte(nil), b...)
}
