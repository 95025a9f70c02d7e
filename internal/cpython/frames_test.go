package cpython

import (
	"context"
	"errors"
	"flag"
	"os"
	"runtime"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes"
	"github.com/tetratelabs/wazero"
)

var updateFrames = flag.Bool("update-frames", false, "make python.frames again, from the interpreter as wazero compiles it here")

// TestStackFrameTable: every function of the instrumented interpreter takes no more of wazero's
// stack than python.frames charges its call, so its call stack stays within the bound the run
// is charged for (interrupt.StackCharge). It fails when the interpreter or wazero changes; then
// run: go test ./internal/cpython -run TestStackFrameTable -update-frames
func TestStackFrameTable(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the frames are read from wazero's amd64 code")
	}
	ctx := context.Background()
	rc := wazero.NewRuntimeConfig().WithCloseOnContextDone(true) // as the runtime compiles it
	if *updateFrames {
		table, err := wazevoframes.Make(ctx, rc, pythonWASM, interrupt.InstrumentShipped)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("python.frames", wazevoframes.Encode(pythonWASM, table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	frames, err := wazevoframes.Decode(pythonFrames, pythonWASM)
	if errors.Is(err, wazevoframes.ErrStale) {
		t.Fatalf("python.frames was made for another python.wasm: go test ./internal/cpython -run TestStackFrameTable -update-frames")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := wazevoframes.Check(ctx, rc, pythonWASM, frames, interrupt.InstrumentShipped); err != nil {
		t.Fatalf("%v: go test ./internal/cpython -run TestStackFrameTable -update-frames", err)
	}
}
