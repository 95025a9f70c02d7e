package cpython

import (
	"flag"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/wazevoframes/framestest"
)

var updateFrames = flag.Bool("update-frames", false, "make python.frames again, from the interpreter as wazero compiles it here")

// TestStackFrameTable: every function of the instrumented interpreter takes no more of wazero's
// stack than python.frames charges its call, so its call stack stays within the bound the run
// is charged for (interrupt.StackCharge). It fails when the interpreter or wazero changes.
func TestStackFrameTable(t *testing.T) {
	framestest.Check(t, framestest.Table{Wasm: pythonWASM, Table: pythonFrames, File: "python.frames",
		Remake: "go test ./internal/cpython -run TestStackFrameTable -args -update-frames"}, *updateFrames)
}
