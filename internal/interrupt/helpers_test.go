package interrupt

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// shippedModules are the modules Skillbox ships: the WAT fixtures, the bundled skills and the
// conformance guests of each language (those that are built).
func shippedModules(t testing.TB) []string {
	var files []string
	for _, g := range []string{"../../testdata/wasm/*.wasm", "../../skills/*/execute.wasm", "../../examples/wasm/*/conformance.wasm", "testdata/*.wasm"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no modules found")
	}
	return files
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustInstrument(t testing.TB, wasm []byte) []byte {
	t.Helper()
	out, ok, err := Instrument(wasm)
	if err != nil || !ok {
		t.Fatalf("Instrument: ok=%v err=%v (%v)", ok, err, Explain(wasm))
	}
	return out
}

// newRuntime is a compiling wazero runtime (the engine Skillbox runs guests on) sharing the
// tests' compilation cache, with wazero's own interruption on or off, and the default features.
func newRuntime(t testing.TB, closeOnDone bool) wazero.Runtime {
	return newRuntimeWith(t, closeOnDone, api.CoreFeaturesV2)
}

// newRuntimeWith is newRuntime with features: tailcall.wasm needs experimental tail calls.
func newRuntimeWith(t testing.TB, closeOnDone bool, features api.CoreFeatures) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	cache, err := wazero.NewCompilationCacheWithDir(testcache.Dir())
	if err != nil {
		t.Fatal(err)
	}
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCloseOnContextDone(closeOnDone).WithCompilationCache(cache).WithMemoryLimitPages(256).
		WithCoreFeatures(features))
	t.Cleanup(func() { r.Close(ctx); cache.Close(ctx) })
	return r
}

// host stands in for every function a module imports: input_length and input_load_u8 (Extism's
// kernel) serve input; every other function returns zeros. Each call is logged, and the call
// past budget fails, so that a guest looping on host calls ends at the same call every time.
type host struct {
	input   []byte
	budget  int
	started chan struct{} // closed at the first call, if not nil

	mu    sync.Mutex
	calls []call
	once  sync.Once
}

type call struct {
	name   string
	params string
}

// link instantiates, in r, host modules with a function for each of compiled's imports.
func (h *host) link(t testing.TB, r wazero.Runtime, compiled wazero.CompiledModule) {
	t.Helper()
	ctx := context.Background()
	builders := map[string]wazero.HostModuleBuilder{}
	for _, f := range compiled.ImportedFunctions() {
		modName, name, _ := f.Import()
		b, ok := builders[modName]
		if !ok {
			b = r.NewHostModuleBuilder(modName)
			builders[modName] = b
		}
		results := len(f.ResultTypes())
		types := f.ParamTypes()
		params := len(types)
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			h.do(name, stack[:max(params, results)], types, results)
		}), f.ParamTypes(), f.ResultTypes()).Export(name)
	}
	for _, b := range builders {
		if _, err := b.Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *host) do(name string, stack []uint64, types []api.ValueType, results int) {
	if h.started != nil {
		h.once.Do(func() { close(h.started) })
	}
	h.mu.Lock()
	h.calls = append(h.calls, call{name: name, params: formatStack(stack[:len(types)], types)})
	n := len(h.calls)
	h.mu.Unlock()
	if h.budget > 0 && n > h.budget {
		panic("host call budget spent")
	}
	var v uint64
	switch name {
	case "input_length":
		v = uint64(len(h.input))
	case "input_load_u8":
		if i := stack[0]; i < uint64(len(h.input)) {
			v = uint64(h.input[i])
		}
	}
	clear(stack[:results])
	if results > 0 {
		stack[0] = v
	}
}

// formatStack records a call's parameters by their types: an i32 or f32 is the low half of its
// stack word (wazero leaves the high half undefined, and it differs between an instrumented
// module and the original when nothing the guest can see does).
func formatStack(s []uint64, types []api.ValueType) string {
	b := make([]byte, 0, 8*len(s))
	for i, v := range s {
		if types[i] == api.ValueTypeI32 || types[i] == api.ValueTypeF32 {
			v = uint64(uint32(v))
		}
		for i := 0; i < 8; i++ {
			b = append(b, byte(v>>(8*i)))
		}
	}
	return string(b)
}
