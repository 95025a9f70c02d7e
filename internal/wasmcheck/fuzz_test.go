package wasmcheck

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
)

// smallLimits reach every limit's code with small inputs.
var smallLimits = Limits{
	MaxModuleBytes: 1 << 16, MaxFunctions: 50, MaxFunctionBytes: 1 << 10, MaxLocals: 20,
	MaxTotalLocals: 100, MaxTypes: 20, MaxImports: 20, MaxExports: 20, MaxGlobals: 20,
	MaxParams: 4, MaxTables: 3, MaxTableEntries: 10, MaxElemSegments: 10, MaxElemEntries: 50,
	MaxDataSegments: 10, MaxMemoryPages: 10, MaxCustomSections: 5,
}

// fuzzSeeds are the shipped modules (under maxSize bytes) and every module the tests write.
func fuzzSeeds(f *testing.F, maxSize int) [][]byte {
	var seeds [][]byte
	for _, p := range shippedModules(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) <= maxSize {
			seeds = append(seeds, b)
		}
	}
	for _, c := range hostileCases() {
		seeds = append(seeds, c.wasm)
	}
	for _, c := range nameCases() {
		seeds = append(seeds, mod(typeVoid, oneFunc, oneBody, c.names))
	}
	return append(seeds, growModule, mod(sec(4, vec(tableNoMax(10), tableMax(5, 7), tableNoMax(20)))),
		mod(sec(9, vec([]byte{0x02, 0x00, 0x41, 0x00, 0x0b, 0x00, 0x01, 0x00},
			[]byte{0x06, 0x00, 0x41, 0x00, 0x0b, 0x70, 0x01, 0xd2, 0x00, 0x0b},
			[]byte{0x07, 0x6f, 0x01, 0xd0, 0x6f, 0x0b}))))
}

// FuzzCheck: Check never panics; it fails only with a LimitError or a FormatError; what it
// accepts, it accepts again and returns unchanged; and what it allocates is proportional to the
// input, whatever the input declares.
func FuzzCheck(f *testing.F) {
	for _, s := range fuzzSeeds(f, 1<<30) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range []Limits{{}, smallLimits} {
			var info *Info
			var out []byte
			var err error
			if a := allocated(1, func() { info, out, err = Check(data, l) }); a > 64<<10+8*uint64(len(data)) {
				t.Fatalf("Check of %d bytes allocated %d", len(data), a)
			}
			if err != nil {
				var le *LimitError
				var fe *FormatError
				if (!errors.As(err, &le) || !errors.Is(err, ErrLimit)) && (!errors.As(err, &fe) || !errors.Is(err, ErrMalformed)) {
					t.Fatalf("error %T %v", err, err)
				}
				if info != nil || out != nil {
					t.Fatal("a result with an error")
				}
				continue
			}
			if !info.Changed && &out[0] != &data[0] {
				t.Fatal("unchanged but copied")
			}
			if info.TableEntries > l.withDefaults().MaxTableEntries {
				t.Fatalf("tables %+v over the budget", info.Tables)
			}
			assertIdempotent(t, out, l)
		}
	})
}

// FuzzWazeroBounded: what Check accepts under small limits, wazero compiles (or refuses) with a
// bounded allocation. This is the test of the claim that Check reads the module as wazero's
// decoder does: a count Check did not see, wazero would allocate gigabytes by.
func FuzzWazeroBounded(f *testing.F) {
	for _, s := range fuzzSeeds(f, 1<<16) {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		_, out, err := Check(data, smallLimits)
		if err != nil {
			return
		}
		r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
		defer r.Close(ctx)
		if a := allocated(1, func() { r.CompileModule(ctx, out) }); a > 64<<20 {
			t.Fatalf("wazero allocated %d bytes compiling %d", a, len(out))
		}
	})
}
