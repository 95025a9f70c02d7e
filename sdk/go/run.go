package skill

import (
	"encoding/json"
	"fmt"
)

// Run is the body of a skill's entry point: it decodes the call's JSON arguments into A,
// calls h, and writes the SkillResult envelope the host expects:
//
//	{"success":true,"result":<R as JSON>}
//	{"success":false,"error":"<err.Error()>"}
//
// It returns 0 whatever h does. A skill failure is reported in the envelope, where the
// model reads it; a non-zero code would make the host report a skill_error with no
// message for the model. Arguments that do not decode, a result that does not encode and
// a panic in h all become success:false, so one bad call never traps the instance.
//
// Empty input is decoded as {}, so a skill without arguments can be called bare.
//
// # Notes
//
// Recovering a panic needs unwinding. Standard Go has it; TinyGo has none on WebAssembly
// (no release through 0.42 recovers on wasm32): a panic prints its message to stdout, which
// the host logs, and aborts, and the host reports the run as a trap rather than
// success:false.
func Run[A any, R any](h func(ctx *Context, args A) (R, error)) int32 {
	return run(platformHost, h)
}

// run is Run against an explicit host, for tests.
func run[A any, R any](hst host, h func(ctx *Context, args A) (R, error)) int32 {
	hst.output(handle(&Context{host: hst}, hst.input(), h))
	return 0
}

// handle turns input into the output envelope by way of h.
func handle[A any, R any](ctx *Context, input []byte, h func(ctx *Context, args A) (R, error)) []byte {
	var args A
	if len(input) == 0 {
		input = []byte("{}")
	}
	if err := json.Unmarshal(input, &args); err != nil {
		return failure("decode arguments: " + err.Error())
	}
	result, err := call(ctx, args, h)
	if err != nil {
		return failure(err.Error())
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return failure("encode result: " + err.Error())
	}
	out := append([]byte(`{"success":true,"result":`), raw...)
	return append(out, '}')
}

// call runs h, turning a panic into an error carrying the panic's message.
func call[A any, R any](ctx *Context, args A, h func(ctx *Context, args A) (R, error)) (result R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, args)
}

// failure returns the envelope of a failed call.
func failure(msg string) []byte {
	b, _ := json.Marshal(struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}{false, msg})
	return b
}
