// Package skill is the Go guest SDK for Skillbox skills.
//
// A skill is a WebAssembly module that the Skillbox host runs in a sandbox. The host
// speaks a small byte-level ABI (skillbox/v1, see docs/abi.md in the Skillbox
// repository); this package hides it so that a skill author writes ctx.Fetch(...) and
// errors.Is(err, skill.ErrDenied), never block offsets and status bytes.
//
// A skill is a main package with an exported entry point and an empty main:
//
//	//go:wasmexport execute
//	func execute() int32 { return skill.Run(greet) }
//
//	func main() {}
//
//	func greet(ctx *skill.Context, args struct{ Name string }) (map[string]string, error) {
//		ctx.Infof("greeting %s", args.Name)
//		return map[string]string{"greeting": "Hello, " + args.Name + "!"}, nil
//	}
//
// It is built as a reactor, because a command module exits after main and cannot be
// called again:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o execute.wasm .
//
// The package also compiles with TinyGo (-target=wasip1 -buildmode=c-shared), and it
// compiles natively so that a skill's handler can be unit-tested with `go test`: package
// skillboxtest runs it against a scripted host (fetch routes, variables, an in-memory
// filesystem, the host's refusals and limits). Without one, natively the host calls
// report FAILED and Run panics, since there is no host to talk to.
package skill
