package quickjs

import (
	"context"
	"errors"
	"flag"
	"os"
	"runtime"
	"testing"

	quickjswasi "github.com/aperturerobotics/go-quickjs-wasi-reactor"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes"
	"github.com/tetratelabs/wazero"
)

var updateFrames = flag.Bool("update-frames", false, "make quickjs.frames again, from the interpreter as wazero compiles it here")

// TestStackFrameTable: every function of the instrumented reactor takes no more of wazero's
// stack than quickjs.frames charges its call, so its call stack stays within the bound the run
// is charged for (interrupt.StackCharge). It fails when the interpreter or wazero changes; then
// run: go test ./internal/quickjs -run TestStackFrameTable -update-frames
func TestStackFrameTable(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the frames are read from wazero's amd64 code")
	}
	ctx := context.Background()
	rc := wazero.NewRuntimeConfig().WithCloseOnContextDone(true) // as the runtime compiles it
	if *updateFrames {
		table, err := wazevoframes.Make(ctx, rc, reactorWASM(t), interrupt.InstrumentShipped)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("quickjs.frames", wazevoframes.Encode(reactorWASM(t), table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	frames, err := wazevoframes.Decode(reactorFrames, reactorWASM(t))
	if errors.Is(err, wazevoframes.ErrStale) {
		t.Fatalf("quickjs.frames was made for another reactor: go test ./internal/quickjs -run TestStackFrameTable -update-frames")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := wazevoframes.Check(ctx, rc, reactorWASM(t), frames, interrupt.InstrumentShipped); err != nil {
		t.Fatalf("%v: go test ./internal/quickjs -run TestStackFrameTable -update-frames", err)
	}
}

// reactorWASM is the reactor as Compile compiles it: its custom sections stripped.
func reactorWASM(t *testing.T) []byte {
	wasm, err := stripCustom(quickjswasi.QuickJSWASM)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}
