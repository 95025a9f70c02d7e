package interrupt

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/tetratelabs/wazero"
)

// fuzzLimits keep what wazero is given small: FuzzInstrument compiles what wasmcheck admits.
var fuzzLimits = wasmcheck.Limits{
	MaxModuleBytes: 1 << 20, MaxFunctions: 200, MaxFunctionBytes: 1 << 16, MaxLocals: 100,
	MaxTotalLocals: 1000, MaxTypes: 100, MaxImports: 50, MaxExports: 50, MaxGlobals: 50,
	MaxParams: 16, MaxTables: 4, MaxTableEntries: 1000, MaxElemSegments: 50, MaxElemEntries: 1000,
	MaxDataSegments: 50, MaxMemoryPages: 16, MaxCustomSections: 10,
}

// FuzzInstrument: Instrument never panics and never fails its self-check; what it returns is
// at most 2x+Slack the input, and what it allocates is proportional to the input whatever the
// input declares; and when the input is a module wazero compiles (after wasmcheck, as Skillbox
// loads modules), so is the output. The interpreter compiles here: it validates as the
// compiler does, for a fraction of the CPU (TestShippedModules uses the compiler).
//
//	go test ./internal/interrupt/ -run '^$' -fuzz FuzzInstrument -fuzztime 60s -parallel 1
func FuzzInstrument(f *testing.F) {
	for _, p := range shippedModules(f) {
		if st, err := os.Stat(p); err == nil && st.Size() <= 1<<20 {
			f.Add(readFile(f, p))
		}
	}
	f.Add(module(typeVoid, oneFunc, endlessFn))
	f.Add(module(custom("a", "b"), typeVoid, oneFunc, sec(8, []byte{0x00}), endlessFn))
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { r.Close(ctx) })
	f.Fuzz(func(t *testing.T, data []byte) {
		var out []byte
		var ok bool
		var err error
		if a := allocated(func() { out, ok, err = Instrument(data) }); a > 1<<20+40*uint64(len(data)) {
			t.Fatalf("Instrument of %d bytes allocated %d", len(data), a)
		}
		if err != nil {
			t.Fatalf("self-check: %v", err)
		}
		if ok && len(out) > 2*len(data)+Slack {
			t.Fatalf("%d bytes from %d", len(out), len(data))
		}
		_, checked, cerr := wasmcheck.Check(data, fuzzLimits)
		if cerr != nil {
			return
		}
		compiled, cerr := r.CompileModule(ctx, checked)
		if cerr != nil {
			return
		}
		compiled.Close(ctx)
		out, ok, err = Instrument(checked)
		if err != nil {
			t.Fatalf("self-check: %v", err)
		}
		if !ok {
			return
		}
		compiled, cerr = r.CompileModule(ctx, out)
		if cerr != nil {
			t.Fatalf("wazero compiles the input, not the output: %v\n%s", cerr, Explain(checked))
		}
		compiled.Close(ctx)
	})
}

// allocated is how many bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
