package kernel

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Namespace is the import module of the kernel functions.
const Namespace = "extism:host/env"

type ctxKey struct{}

// With returns ctx carrying k, for the guest calls whose kernel functions use it. Make it the
// outermost value of the call's context: the kernel functions look it up on every call, and a
// lookup walks the chain from the outside.
func With(ctx context.Context, k *Kernel) context.Context {
	return context.WithValue(ctx, ctxKey{}, k)
}

// From returns the kernel ctx carries (With), or nil.
func From(ctx context.Context) *Kernel {
	k, _ := ctx.Value(ctxKey{}).(*Kernel)
	return k
}

func from(ctx context.Context, fn string) *Kernel {
	k := From(ctx)
	if k == nil {
		// A module instance outliving its run, or a call made without With: refuse it, never
		// touch another run's state.
		panic(errors.New("kernel call " + fn + " outside a run"))
	}
	return k
}

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

type function struct {
	name            string
	params, results []api.ValueType
	fn              func(k *Kernel, stack []uint64)
}

// functions are the kernel ABI: the same names and signatures as the "extism:host/env" module of
// Extism's go-sdk, so a module that links against one links against the other.
var functions = []function{
	{"alloc", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.Alloc(s[0]) }},
	{"free", []api.ValueType{i64}, nil, func(k *Kernel, s []uint64) { k.Free(s[0]) }},
	{"length", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.Length(s[0]) }},
	{"length_unsafe", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.Length(s[0]) }},
	{"load_u8", []api.ValueType{i64}, []api.ValueType{i32}, func(k *Kernel, s []uint64) { s[0] = uint64(k.loadU8("load_u8", s[0])) }},
	{"load_u64", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.loadU64("load_u64", s[0]) }},
	{"store_u8", []api.ValueType{i64, i32}, nil, func(k *Kernel, s []uint64) { k.storeU8("store_u8", s[0], byte(s[1])) }},
	{"store_u64", []api.ValueType{i64, i64}, nil, func(k *Kernel, s []uint64) { k.storeU64("store_u64", s[0], s[1]) }},
	{"input_length", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.inputLen }},
	{"input_offset", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.inputOff }},
	{"input_load_u8", []api.ValueType{i64}, []api.ValueType{i32}, func(k *Kernel, s []uint64) { s[0] = uint64(k.inputU8(s[0])) }},
	{"input_load_u64", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.inputU64(s[0]) }},
	{"input_set", []api.ValueType{i64, i64}, nil, func(k *Kernel, s []uint64) {
		// Extism's kernel ignores a range outside its blocks.
		if k.inRange(s[0], s[1]) {
			k.inputOff, k.inputLen = s[0], s[1]
		}
	}},
	{"output_set", []api.ValueType{i64, i64}, nil, func(k *Kernel, s []uint64) {
		if s[1] == 0 {
			k.outputOff, k.outputLen = 0, 0
			return
		}
		if !k.inRange(s[0], s[1]) {
			panic(k.fault("output_set", s[0], "the output range is outside the kernel's memory blocks"))
		}
		k.outputOff, k.outputLen = s[0], s[1]
	}},
	{"output_length", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.outputLen }},
	{"output_offset", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.outputOff }},
	{"reset", nil, nil, func(k *Kernel, s []uint64) { k.Reset() }},
	{"error_set", []api.ValueType{i64}, nil, func(k *Kernel, s []uint64) {
		// 0 clears it; Extism's kernel ignores an offset outside its blocks.
		if s[0] == 0 || k.inRange(s[0], 1) {
			k.errOff = s[0]
		}
	}},
	{"error_get", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.errOff }},
	{"memory_bytes", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = uint64(len(k.buf)) }},
	{"config_get", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) {
		// Skillbox gives modules no Extism config (their settings come through the SkillContext):
		// every key is unset. The name must still be a block, as Extism requires.
		k.mustBytes("config_get", s[0])
		s[0] = 0
	}},
	{"var_get", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) {
		v, ok := k.vars[string(k.mustBytes("var_get", s[0]))]
		k.Free(s[0])
		if !ok {
			s[0] = 0
			return
		}
		s[0] = k.allocBytes("var_get", v)
	}},
	{"var_set", []api.ValueType{i64, i64}, nil, func(k *Kernel, s []uint64) {
		name := string(k.mustBytes("var_set", s[0]))
		k.Free(s[0])
		if s[1] == 0 {
			delete(k.vars, name)
			return
		}
		value := k.mustBytes("var_set", s[1])
		if err := k.setVar(name, value); err != nil {
			panic(k.fault("var_set", s[1], err.Error()))
		}
		k.Free(s[1])
	}},
	{"http_request", []api.ValueType{i64, i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) {
		req := k.mustBytes("http_request", s[0])
		var head struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(req, &head)
		panic(k.fault("http_request", s[0], "Extism's own HTTP is not available to skills (request to "+
			quoteURL(head.URL)+"); fetch with skillbox_fetch, which applies the skill's network grant"))
	}},
	{"http_status_code", nil, []api.ValueType{i32}, func(k *Kernel, s []uint64) { s[0] = 0 }},
	{"http_headers", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = 0 }},
	{"get_log_level", nil, []api.ValueType{i32}, func(k *Kernel, s []uint64) { s[0] = LevelInfo }},
	logFunction("log_trace", LevelTrace),
	logFunction("log_debug", LevelDebug),
	logFunction("log_info", LevelInfo),
	logFunction("log_warn", LevelWarn),
	logFunction("log_error", LevelError),
}

// logFunction is a log_* function. Below the level the runtime keeps (get_log_level), Extism frees
// the message unread; at or above it, the message must be a block.
func logFunction(name string, level int) function {
	return function{name, []api.ValueType{i64}, nil, func(k *Kernel, s []uint64) {
		if level < LevelInfo {
			k.Free(s[0])
			return
		}
		msg := k.mustBytes(name, s[0])
		if k.Observer != nil {
			k.Observer.Log(level, msg)
		}
		k.Free(s[0])
	}}
}

// quoteURL shows at most 200 bytes of a URL the guest chose.
func quoteURL(u string) string {
	if len(u) > 200 {
		u = u[:200] + "…"
	}
	b, _ := json.Marshal(u)
	return string(b)
}

// Instantiate adds the kernel module to r. Its functions find their run's Kernel in the call's
// context (With); a call without one is refused.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	b := r.NewHostModuleBuilder(Namespace)
	for _, f := range functions {
		fn, name := f.fn, f.name
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				fn(from(ctx, name), stack)
			}), f.params, f.results).
			WithName(name).
			Export(name)
	}
	return b.Instantiate(ctx)
}
