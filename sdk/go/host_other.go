//go:build !wasm

package skill

import "github.com/skillbox-dev/skillbox/sdk/go/internal/hostcall"

// Natively there is no Skillbox host. The package still compiles so that skills can be
// unit-tested with `go test`: package skillboxtest hands a handler a Context on a scripted
// host. Without it the host calls answer FAILED and Run panics, because a skill's output
// has nowhere to go.
var platformHost host = noHost{}

// The seam skillboxtest builds its Context through. It exists in native builds only: a
// WebAssembly skill always talks to the real host, with nothing to swap.
func init() {
	hostcall.NewContext = func(h hostcall.Host) any { return &Context{host: h} }
}

type noHost struct{}

var noHostReply = append([]byte{byte(Failed)}, "not running in a Skillbox WebAssembly guest"...)

func (noHost) Input() []byte {
	panic("skill: Run needs a Skillbox host; build with GOOS=wasip1 GOARCH=wasm, or test the handler with skillboxtest.Run")
}
func (noHost) Output([]byte)                {}
func (noHost) Fetch(_, _ []byte) []byte     { return noHostReply }
func (noHost) Env([]byte) []byte            { return noHostReply }
func (noHost) ReadFile([]byte) []byte       { return noHostReply }
func (noHost) WriteFile(_, _ []byte) []byte { return noHostReply }
func (noHost) Log(int32, []byte)            {}
