package quickjs

import (
	"flag"
	"testing"

	quickjswasi "github.com/aperturerobotics/go-quickjs-wasi-reactor"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes/framestest"
)

var updateFrames = flag.Bool("update-frames", false, "make quickjs.frames again, from the reactor as wazero compiles it here")

// TestStackFrameTable: every function of the instrumented reactor (custom sections stripped, as
// Compile compiles it) takes no more of wazero's stack than quickjs.frames charges its call. It
// fails when the reactor or wazero changes.
func TestStackFrameTable(t *testing.T) {
	wasm, err := stripCustom(quickjswasi.QuickJSWASM)
	if err != nil {
		t.Fatal(err)
	}
	guard, err := cStackGuard(wasm)
	if err != nil {
		t.Fatal(err)
	}
	framestest.Check(t, framestest.Table{Wasm: wasm, Table: reactorFrames, File: "quickjs.frames", Guards: []interrupt.Guard{guard},
		Remake: "go test ./internal/quickjs -run TestStackFrameTable -args -update-frames"}, *updateFrames)
}
