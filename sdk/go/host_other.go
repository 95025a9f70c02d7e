//go:build !wasm

package skill

// Natively there is no Skillbox host. The package still compiles so that its decoding
// logic can be tested with `go test`; the host calls answer FAILED and Run panics,
// because a skill's output has nowhere to go.
var platformHost host = noHost{}

type noHost struct{}

var noHostReply = append([]byte{byte(Failed)}, "not running in a Skillbox WebAssembly guest"...)

func (noHost) input() []byte {
	panic("skill: Run needs a Skillbox host; build with GOOS=wasip1 GOARCH=wasm")
}
func (noHost) output([]byte)                {}
func (noHost) fetch(_, _ []byte) []byte     { return noHostReply }
func (noHost) env([]byte) []byte            { return noHostReply }
func (noHost) readFile([]byte) []byte       { return noHostReply }
func (noHost) writeFile(_, _ []byte) []byte { return noHostReply }
func (noHost) log(Level, []byte)            {}
