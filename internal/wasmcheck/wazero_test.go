package wasmcheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// shippedModules are the modules Skillbox ships, those of them that are built (CI builds the
// non-Go examples).
func shippedModules(t testing.TB) []string {
	var files []string
	for _, g := range []string{"../../testdata/wasm/*.wasm", "../../skills/*/execute.wasm", "../../examples/wasm/*/conformance.wasm"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no shipped modules found")
	}
	return files
}

// newRuntime is a wazero runtime with the default features. The interpreter validates and
// compiles modules as the compiler does, at a fraction of the CPU.
func newRuntime(t testing.TB) wazero.Runtime {
	r := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// instantiate links compiled against host functions that return zeros, one for each function it
// imports, and instantiates it without running any start function.
func instantiate(ctx context.Context, r wazero.Runtime, compiled wazero.CompiledModule) error {
	hosts := map[string]wazero.HostModuleBuilder{}
	for _, f := range compiled.ImportedFunctions() {
		modName, name, _ := f.Import()
		b, ok := hosts[modName]
		if !ok {
			b = r.NewHostModuleBuilder(modName)
			hosts[modName] = b
		}
		results := len(f.ResultTypes())
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			clear(stack[:results])
		}), f.ParamTypes(), f.ResultTypes()).Export(name)
	}
	for _, b := range hosts {
		if _, err := b.Instantiate(ctx); err != nil {
			return err
		}
	}
	_, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions())
	return err
}

// TestShippedModules: every module Skillbox ships passes DefaultLimits, and what Check returns
// still compiles with wazero (and, for the WAT fixtures, instantiates). The Go guests' table,
// which declares no maximum, gets one.
func TestShippedModules(t *testing.T) {
	ctx := context.Background()
	for _, f := range shippedModules(t) {
		t.Run(strings.TrimPrefix(f, "../../"), func(t *testing.T) {
			wasm, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			info, out, err := Check(wasm, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes: %d functions (%d imported), code %d bytes, largest %d (function %d), %d data segments, locals %d (most %d), tables %+v, memory %+v, changed %v",
				len(wasm), info.Functions, info.ImportedFunctions, info.CodeBytes, info.LargestFunction, info.LargestFunctionIndex,
				info.DataSegments, info.Locals, info.MostLocals, info.Tables, info.Memory, info.Changed)
			if info.NamesDropped != 0 {
				t.Errorf("name section dropped: %v", info.NamesError)
			}
			for _, tb := range info.Tables {
				if tb.Max < tb.Min || uint64(tb.Max) > DefaultLimits.MaxTableEntries {
					t.Errorf("table %+v", tb)
				}
			}
			if strings.HasPrefix(f, "../../skills/") || strings.Contains(f, "/go/") { // Go guests
				if len(info.Tables) != 1 || !info.Tables[0].Capped || uint64(info.Tables[0].Max) != DefaultLimits.MaxTableEntries || !info.Changed {
					t.Errorf("Go guest's table %+v, changed %v", info.Tables, info.Changed)
				}
			}
			assertIdempotent(t, out, DefaultLimits)
			r := newRuntime(t)
			compiled, err := r.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("wazero does not compile the checked module: %v", err)
			}
			if strings.Contains(f, "/testdata/wasm/") {
				if err := instantiate(ctx, r, compiled); err != nil {
					t.Fatalf("wazero does not instantiate the checked module: %v", err)
				}
			}
		})
	}
}

// growModule exports grow(delta i32) i32, which is table.grow of its funcref table (min 1, no
// maximum) by delta null references.
var growModule = mod(
	sec(1, vec([]byte{0x60, 0x01, 0x7f, 0x01, 0x7f})),
	oneFunc,
	sec(4, vec(tableNoMax(1))),
	sec(7, vec(cat(str("grow"), []byte{0x00, 0x00}))),
	sec(10, vec(cat([]byte{0x09, 0x00}, []byte{0xd0, 0x70, 0x20, 0x00, 0xfc, 0x0f, 0x00, 0x0b}))),
)

// TestTableGrowBounded: as written, the module grows its table by a million entries (8 MiB of
// the host's memory; by 2^32-2 it would ask for 32 GiB, which is not run here); once checked,
// table.grow past the budget returns -1 without allocating.
func TestTableGrowBounded(t *testing.T) {
	ctx := context.Background()
	grow := func(wasm []byte) api.Function {
		r := wazero.NewRuntime(ctx)
		t.Cleanup(func() { r.Close(ctx) })
		m, err := r.Instantiate(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		return m.ExportedFunction("grow")
	}
	call := func(f api.Function, delta uint32) uint32 {
		res, err := f.Call(ctx, uint64(delta))
		if err != nil {
			t.Fatal(err)
		}
		return uint32(res[0])
	}

	unchecked := grow(growModule)
	if a := allocated(1, func() {
		if got := call(unchecked, 1<<20); got != 1 {
			t.Fatalf("unchecked grow by 2^20 = %d", got)
		}
	}); a < 8<<20 {
		t.Errorf("unchecked grow by 2^20 entries allocated %d bytes; want at least 8 MiB", a)
	}

	info, out, err := Check(growModule, Limits{})
	if err != nil || info.Tables[0].Max != 1<<20 {
		t.Fatalf("%+v %v", info, err)
	}
	checked := grow(out)
	a := allocated(1, func() {
		for _, delta := range []uint32{1 << 20, 0x7FFFFFFF, 0xFFFFFFFE} {
			if got := call(checked, delta); got != 0xFFFFFFFF {
				t.Errorf("grow by %d = %d; want -1", delta, got)
			}
		}
	})
	if a > 1<<20 {
		t.Errorf("refused grows allocated %d bytes", a)
	}
	if got := call(checked, 1<<20-1); got != 1 { // up to the maximum is still fine
		t.Errorf("grow to the maximum = %d; want 1", got)
	}
	if got := call(checked, 1); got != 0xFFFFFFFF {
		t.Errorf("grow past the maximum = %d; want -1", got)
	}
}

// TestWazeroAllocatesByDeclaredCount shows the danger Check is for, scaled down so that it is
// cheap: wazero v1.12 allocates by a count a few bytes declare before it finds the bytes are not
// there. At full scale (2^32-1) each of these asks for tens or hundreds of GB and the Go runtime
// dies with a fatal "out of memory", which no recover catches; those are not run. Check refuses
// each with a few hundred bytes.
func TestWazeroAllocatesByDeclaredCount(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		wasm []byte
		min  uint64 // what wazero allocates, at least
	}{
		// internal/wasm/binary/code.go decodeCode: localTypes := make([]wasm.ValueType, 0, sum),
		// 8 bytes a local: 2^22 locals are 32 MiB; 2^32-1 would be 32 GiB. The body does not
		// end, so decoding fails after the allocation.
		{"locals", mod(typeVoid, oneFunc, sec(10, vec(cat([]byte{0x06, 0x01}, leb(1<<22), []byte{0x7f, 0x00})))), 32 << 20},
		// section.go decodeCodeSection: result := make([]wasm.Code, vs), 72 bytes an entry: 2^20
		// are 72 MiB; 2^32-1 would be 309 GB.
		{"code count", mod(sec(10, leb(1<<20))), 72 << 20},
		// data.go decodeDataSegment: ret.Init = make([]byte, vs) before io.ReadFull.
		{"data length", mod(sec(11, vec(cat([]byte{0x01}, leb(1<<26))))), 64 << 20},
		// names.go decodeLocalNames: make(wasm.NameMap, localCount), 24 bytes a name.
		{"local names", mod(typeVoid, oneFunc, oneBody, nameSec(sub(2, vec(cat(leb(0), leb(1<<21)))))), 48 << 20},
	}
	r := newRuntime(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if a := allocated(1, func() { r.CompileModule(ctx, c.wasm) }); a < c.min {
				t.Errorf("wazero allocated %d bytes for %d; expected at least %d", a, len(c.wasm), c.min)
			} else {
				t.Logf("wazero allocated %d MiB for a module of %d bytes", a>>20, len(c.wasm))
			}
			var err error
			var info *Info
			if a := allocated(1, func() { info, _, err = Check(c.wasm, Limits{}) }); a > 64<<10 {
				t.Errorf("Check allocated %d bytes", a)
			}
			if err == nil && (info == nil || info.NamesDropped != 1) {
				t.Errorf("Check took the module: %+v", info)
			}
		})
	}
}

// TestNameSectionWazero: the name sections that make wazero refuse a module are the ones Check
// drops, and wazero takes what Check returns.
func TestNameSectionWazero(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t)
	for _, c := range nameCases() {
		if !c.wazeroRefuses {
			continue
		}
		in := mod(typeVoid, oneFunc, oneBody, c.names)
		if _, err := r.CompileModule(ctx, in); err == nil {
			t.Errorf("%s: wazero compiled the module", c.name)
		}
		_, out, err := Check(in, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.CompileModule(ctx, out); err != nil {
			t.Errorf("%s: wazero refused the checked module: %v", c.name, err)
		}
	}
}
