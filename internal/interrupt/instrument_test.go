package interrupt

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// fallbacks are the shipped modules Instrument leaves alone, and why.
var fallbacks = map[string]string{
	// AssemblyScript runs its top-level code from a start function, during instantiation.
	"assemblyscript/conformance.wasm": "a start function",
	// The runtime's test of that fallback.
	"testdata/wasm/startloop.wasm": "a start function",
}

func fallbackReason(path string) (string, bool) {
	for suffix, why := range fallbacks {
		if strings.HasSuffix(filepath.ToSlash(path), suffix) {
			return why, true
		}
	}
	return "", false
}

// TestShippedModules: every module Skillbox ships is instrumented (but those in fallbacks,
// refused for the reason given), within the size bound; wazero compiles the output; the
// sections other than global, export and code are kept byte for byte; and the output is not
// instrumented twice.
func TestShippedModules(t *testing.T) {
	r := newRuntimeWith(t, false, api.CoreFeaturesV2|experimental.CoreFeaturesTailCall)
	ctx := context.Background()
	for _, path := range shippedModules(t) {
		in := readFile(t, path)
		out, ok, err := Instrument(in)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if why, fallback := fallbackReason(path); fallback {
			if ok {
				t.Errorf("%s: instrumented, expected a fallback (%s)", path, why)
			} else if err := Explain(in); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), why) {
				t.Errorf("%s: refused with %v, expected %q", path, err, why)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: not instrumented: %v", path, Explain(in))
			continue
		}
		if len(out) > 2*len(in)+Slack {
			t.Errorf("%s: %d bytes instrumented from %d", path, len(out), len(in))
		}
		if _, err := r.CompileModule(ctx, out); err != nil {
			t.Errorf("%s: wazero refuses the instrumented module: %v", path, err)
		}
		if a, b := keptSections(t, in, in), keptSections(t, out, in); !equalSections(a, b) {
			t.Errorf("%s: sections changed: %d before, %d after", path, len(a), len(b))
		}
		if _, ok, _ := Instrument(out); ok {
			t.Errorf("%s: instrumented twice", path)
		}
		t.Logf("%s: %d -> %d bytes", path, len(in), len(out))
	}
}

// rawSection is one section as it is in a module.
type rawSection struct {
	id    byte
	bytes []byte
}

// sections splits a well-formed module into its sections.
func sections(t testing.TB, wasm []byte) []rawSection {
	t.Helper()
	var out []rawSection
	r := wasmbin.Reader{B: wasm, Pos: 8, End: len(wasm)}
	for r.Pos < r.End {
		start := r.Pos
		id := wasm[r.Pos]
		r.Pos++
		size, err := r.U32("size")
		if err != nil {
			t.Fatal(err)
		}
		r.Pos += int(size)
		out = append(out, rawSection{id: id, bytes: wasm[start:r.Pos]})
	}
	return out
}

// keptSections are the sections Instrument copies: all but global, export, code, DWARF, and
// the memory section if the input (in) defines no memory (one is added).
func keptSections(t testing.TB, wasm, in []byte) []rawSection {
	win := newWalker(in)
	if err := win.module(); err != nil {
		t.Fatal(err)
	}
	newMem := win.memories == 0
	var kept []rawSection
	for _, s := range sections(t, wasm) {
		if s.id == secGlobal || s.id == secExport || s.id == secCode || isDWARF(s) || s.id == secMemory && newMem {
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

func isDWARF(s rawSection) bool {
	if s.id != secCustom {
		return false
	}
	r := wasmbin.Reader{B: s.bytes, Pos: 1, End: len(s.bytes)}
	if _, err := r.U32("size"); err != nil {
		return false
	}
	name, err := r.Bytes("name")
	return err == nil && strings.HasPrefix(string(name), ".debug_")
}

func equalSections(a, b []rawSection) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].id != b[i].id || !bytes.Equal(a[i].bytes, b[i].bytes) {
			return false
		}
	}
	return true
}
