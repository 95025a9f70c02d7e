package interrupt

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// BenchmarkInterruption runs spin.wasm (2M iterations of an integer hash, no host call in the
// loop) three ways, one call of each a round, in an order that rotates every round so that none
// always runs first or after the same other: (a) as it is with wazero's interruption off, (b)
// as it is with it on, (c) instrumented with it off, as Skillbox would run it. It reports each
// one's median and the ratios to (a).
//
//	go test ./internal/interrupt/ -run '^$' -bench Interruption -benchtime 30x
func BenchmarkInterruption(b *testing.B) {
	spin := readFile(b, "../../testdata/wasm/spin.wasm")
	ways := []struct {
		name        string
		wasm        []byte
		closeOnDone bool
	}{
		{"off", spin, false},
		{"on", spin, true},
		{"instrumented", mustInstrument(b, spin), false},
	}
	ctx := context.Background()
	fns := make([]api.Function, len(ways))
	for i, w := range ways {
		r := newRuntime(b, w.closeOnDone)
		compiled, err := r.CompileModule(ctx, w.wasm)
		if err != nil {
			b.Fatal(err)
		}
		(&host{input: []byte(`{"n":2000000}`)}).link(b, r, compiled)
		mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig())
		if err != nil {
			b.Fatal(err)
		}
		fns[i] = mod.ExportedFunction("execute")
		if _, err := fns[i].Call(ctx); err != nil { // warm up, and fail early
			b.Fatal(err)
		}
	}
	took := make([][]time.Duration, len(ways))
	b.ResetTimer()
	for round := 0; round < b.N; round++ {
		for k := range ways {
			i := (round + k) % len(ways)
			start := time.Now()
			if _, err := fns[i].Call(ctx); err != nil {
				b.Fatal(err)
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	b.StopTimer()
	median := make([]float64, len(ways))
	for i, w := range ways {
		slices.Sort(took[i])
		median[i] = float64(took[i][len(took[i])/2]) / float64(time.Millisecond)
		b.ReportMetric(median[i], w.name+"-ms")
	}
	b.ReportMetric(median[1]/median[0], "on/off")
	b.ReportMetric(median[2]/median[0], "instrumented/off")
}

// BenchmarkInstrument rewrites the Go conformance guest (3.4 MB, the size of every Go skill),
// self-check included.
func BenchmarkInstrument(b *testing.B) {
	wasm := readFile(b, "../../examples/wasm/go/conformance.wasm")
	b.SetBytes(int64(len(wasm)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := Instrument(wasm); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
