package quickjs

import (
	"flag"
	"testing"

	quickjswasi "github.com/aperturerobotics/go-quickjs-wasi-reactor"
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wasmbin"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes/framestest"
)

var updateFrames = flag.Bool("update-frames", false, "make quickjs.frames again, from the reactor as wazero compiles it here")

// TestStackFrameTable: every function of the instrumented reactor (custom sections stripped, as
// Compile compiles it) takes no more of wazero's stack than quickjs.frames charges its call. It
// fails when the reactor or wazero changes.
func TestStackFrameTable(t *testing.T) {
	wasm := reactorWasm(t)
	guard, err := cStackGuard(wasm)
	if err != nil {
		t.Fatal(err)
	}
	framestest.Check(t, framestest.Table{Wasm: wasm, Table: reactorFrames, File: "quickjs.frames", Guards: []interrupt.Guard{guard},
		Remake: "go test ./internal/quickjs -run TestStackFrameTable -args -update-frames"}, *updateFrames)
}

// TestTheCStackIsAboveTheData: the reactor's data segments end below its C stack, which
// cStackGuard takes to be reactorStack bytes under where __stack_pointer starts; the bss,
// which has no segment, lies between them. It fails when the reactor is linked otherwise.
func TestTheCStackIsAboveTheData(t *testing.T) {
	wasm := reactorWasm(t)
	sp, err := stackPointer(wasm)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(0)
	r := &wasmbin.Reader{B: wasm, Pos: 8, End: len(wasm)}
	for r.Pos < len(wasm) {
		id, _ := r.Byte("section id")
		size, _ := r.U32("section size")
		next := r.Pos + int(size)
		if id == 11 { // data: active segments of memory 0 at an i32.const
			n, _ := r.U32("segments")
			for i := uint32(0); i < n; i++ {
				flags, _ := r.U32("flags")
				op, _ := r.Byte("opcode")
				off, err := r.I32("offset")
				e, _ := r.Byte("end")
				if flags != 0 || op != 0x41 || e != 0x0b || err != nil {
					t.Fatalf("data segment %d is not an active segment at an i32.const", i)
				}
				n, _ := r.U32("size")
				end = max(end, int64(off)+int64(n))
				r.Pos += int(n)
			}
		}
		r.Pos = next
	}
	if end == 0 || end > int64(sp)-reactorStack {
		t.Fatalf("the data ends at %d, the C stack (%d bytes under %d) starts at %d", end, reactorStack, sp, int64(sp)-reactorStack)
	}
	t.Logf("data ends at %d; the C stack spans %d-%d", end, int64(sp)-reactorStack, sp)
}

// reactorWasm is the reactor as Compile takes it: its custom sections stripped.
func reactorWasm(t *testing.T) []byte {
	t.Helper()
	wasm, err := stripCustom(quickjswasi.QuickJSWASM)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}
