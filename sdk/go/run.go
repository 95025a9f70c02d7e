package skill

import "github.com/skillbox-dev/skillbox/sdk/go/internal/hostcall"

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
	hst.Output(hostcall.Handle(&Context{host: hst}, hst.Input(), h))
	return 0
}
