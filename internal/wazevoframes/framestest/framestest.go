// Package framestest checks, and makes again, the frame table of a module Skillbox ships: the
// test an interpreter's package runs over its embedded table (see package wazevoframes).
package framestest

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes"
	"github.com/tetratelabs/wazero"
)

// Table is one shipped module's table.
type Table struct {
	Wasm  []byte // the module, as instrumented (before)
	Table []byte // its embedded table
	File  string // the table's file, in the package's directory
	// Remake is the command that makes File again, for the failure message.
	Remake string
	// Guards are the module's guards, as it is instrumented (see interrupt.Guard).
	Guards []interrupt.Guard
}

// instrument is how the module is instrumented: with its guards.
func (tb Table) instrument(wasm []byte, frames []uint32) ([]byte, error) {
	return interrupt.InstrumentShipped(wasm, frames, tb.Guards...)
}

// Check confirms that every function of the module, instrumented with the table, takes no
// more of wazero's stack than the table charges its call, compiled as the runtime compiles an
// interpreter (wazero's interruption off: interrupt.Stop ends its runs). With update, it makes
// the table again instead. It skips on other architectures than amd64, whose code it cannot
// read.
func Check(t *testing.T, tb Table, update bool) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("the frames are read from wazero's amd64 code")
	}
	ctx := context.Background()
	rc := wazero.NewRuntimeConfig().WithCloseOnContextDone(false)
	if update {
		table, err := wazevoframes.Make(ctx, rc, tb.Wasm, tb.instrument)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tb.File, wazevoframes.Encode(tb.Wasm, table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	frames, err := wazevoframes.Decode(tb.Table, tb.Wasm)
	if errors.Is(err, wazevoframes.ErrStale) {
		t.Fatalf("%s was made for another module: %s", tb.File, tb.Remake)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := wazevoframes.Check(ctx, rc, tb.Wasm, frames, tb.instrument); err != nil {
		t.Fatalf("%s: %v: %s", tb.File, err, tb.Remake)
	}
}
