package runtime

import (
	"context"
	"os"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/extismhost"
	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/internal/kernel"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// The engine benchmarks measure their contenders interleaved (package interleave) and report
// ratios to a floor measured in the same rounds.
//
//	go test -run '^$' -bench 'Engine' -benchtime 2000x ./runtime/

// allocs reports what one call of f allocates: objects and bytes.
func allocs(f func()) (objects, bytes float64) {
	const n = 50
	f()
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	for range n {
		f()
	}
	goruntime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / n, float64(after.TotalAlloc-before.TotalAlloc) / n
}

// BenchmarkEngineTrivialRun is a full rt.Run of the trivial WAT skill on each engine against the
// bare wazero floor (instantiate + call of the same module, its imports the cheapest Go
// functions). Targets: native <= 3x the floor in time, <= 2x its allocations and bytes.
func BenchmarkEngineTrivialRun(b *testing.B) {
	dir := b.TempDir()
	fixture(b, dir, "hello", simple("hello", ""), "hello")
	ctx := context.Background()
	runOne := func(rt *Runtime) func() {
		return func() {
			if _, err := rt.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); err != nil {
				b.Fatal(err)
			}
		}
	}
	native := runOne(newRuntime(b, Config{SkillDirs: []string{dir}}))
	ref := runOne(newRuntime(b, Config{SkillDirs: []string{dir}, Shared: newShared(b, SharedConfig{Engine: EngineExtism})}))
	wasm, err := os.ReadFile(dir + "/hello/" + spec.ModuleFile)
	if err != nil {
		b.Fatal(err)
	}
	floor := wazeroFloor(b, wasm)
	p50 := interleave.Run(b, interleave.Contender{Name: "wazero", F: floor}, interleave.Contender{Name: "native", F: native}, interleave.Contender{Name: "extism", F: ref})
	b.ReportMetric(p50["native"]/p50["wazero"], "native/wazero")
	b.ReportMetric(p50["extism"]/p50["wazero"], "extism/wazero")
	fo, fb := allocs(floor)
	no, nb := allocs(native)
	b.ReportMetric(no, "native-allocs/op")
	b.ReportMetric(nb, "native-B/op")
	b.ReportMetric(no/fo, "allocs-native/wazero")
	b.ReportMetric(nb/fb, "bytes-native/wazero")
}

// BenchmarkEngineHostCall is the cost of one skillbox_env round trip (the guest's alloc'd name,
// the call, its reply read and freed: three host calls) at 10, 100, 1,000 and 3,000 calls per
// run: the runs' median less the median of the same guest making none, per call. Its floor
// (bare) is the same guest on bare wazero, each import the cheapest Go function, measured in
// the same rounds. Targets: native <= 3x bare at 1,000 calls, and flat.
func BenchmarkEngineHostCall(b *testing.B) {
	wasm, err := os.ReadFile("../testdata/wasm/calls.wasm")
	if err != nil {
		b.Fatal(err)
	}
	for _, engine := range []Engine{EngineNative, EngineExtism} {
		b.Run(string(engine), func(b *testing.B) {
			dir := b.TempDir()
			fixture(b, dir, "calls", simple("calls", `"parameters":{"n":{"type":"integer"}},"permissions":{"env":["X"]}`), "calls")
			rt := newRuntime(b, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Env: map[string]string{"X": "1"}}, Shared: newShared(b, SharedConfig{Engine: engine})})
			ctx := context.Background()
			counts := []int{0, 10, 100, 1000, 3000}
			var cs []interleave.Contender
			for _, n := range counts {
				args := []byte(`{"n":` + strconv.Itoa(n) + `}`)
				cs = append(cs, interleave.Contender{Name: strconv.Itoa(n), F: func() {
					res, err := rt.Run(ctx, run.Request{Skill: "calls", Args: args, Who: testAdmin})
					if err != nil || string(res.Result) != "0" {
						b.Fatal(err, string(res.Result))
					}
				}})
			}
			bare := bareCalls(b, wasm)
			cs = append(cs, interleave.Contender{Name: "bare-0", F: bare(0)}, interleave.Contender{Name: "bare-1000", F: bare(1000)})
			p50 := interleave.Run(b, cs...)
			for _, n := range counts[1:] {
				b.ReportMetric((p50[strconv.Itoa(n)]-p50["0"])/float64(n), "ns/call@"+strconv.Itoa(n))
			}
			floor := (p50["bare-1000"] - p50["bare-0"]) / 1000
			b.ReportMetric(floor, "bare-ns/call@1000")
			b.ReportMetric((p50["1000"]-p50["0"])/1000/floor, "call/bare@1000")
		})
	}
}

// bareCalls runs wasm on bare wazero, its input the digits of n (calls.wasm makes n calls):
// each import of the test guests is the cheapest Go function that keeps the guest on its path
// (env's reply at 8), and randomness is zeros.
func bareCalls(b *testing.B, wasm []byte) func(n int) func() {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(wazero.NewCompilationCache()))
	b.Cleanup(func() { r.Close(ctx) })
	var input []byte
	i64 := []api.ValueType{api.ValueTypeI64}
	_, err := r.NewHostModuleBuilder("extism:host/env").
		NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = uint64(len(input)) }), nil, i64).Export("input_length").
		NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = uint64(input[s[0]]) }), i64, []api.ValueType{api.ValueTypeI32}).Export("input_load_u8").
		NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = 1 }), i64, i64).Export("alloc").
		NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) {}), i64, nil).Export("free").
		NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) {}), []api.ValueType{api.ValueTypeI64, api.ValueTypeI32}, nil).Export("store_u8").
		NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = 0 }), i64, []api.ValueType{api.ValueTypeI32}).Export("load_u8").
		NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) {}), []api.ValueType{api.ValueTypeI64, api.ValueTypeI64}, nil).Export("output_set").
		Instantiate(ctx)
	if err == nil {
		_, err = r.NewHostModuleBuilder("extism:host/user").
			NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = 8 }), i64, i64).Export("skillbox_env").
			Instantiate(ctx)
	}
	if err != nil {
		b.Fatal(err)
	}
	mod, err := r.CompileModule(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	cfg := wazero.NewModuleConfig().WithName("").WithRandSource(zeroReader{})
	return func(n int) func() {
		digits := []byte(strconv.Itoa(n))
		return func() {
			input = digits
			m, err := r.InstantiateModule(ctx, mod, cfg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.ExportedFunction("execute").Call(ctx); err != nil {
				b.Fatal(err)
			}
			m.Close(ctx)
		}
	}
}

// BenchmarkEngineInterruption runs a CPU-bound guest (spin.wat, 2M iterations, no host call) with
// bare wazero compiled with and without interruption (WithCloseOnContextDone), and as a full
// native run, which is always interruptible: its module instrumented (internal/interrupt), or
// compiled with wazero's interruption when it cannot be. Target: native <= 1.5x off.
func BenchmarkEngineInterruption(b *testing.B) {
	wasm, err := os.ReadFile("../testdata/wasm/spin.wasm")
	if err != nil {
		b.Fatal(err)
	}
	input := []byte(`{"n":2000000}`)
	bare := func(interrupt bool) func() {
		ctx := context.Background()
		r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(interrupt))
		b.Cleanup(func() { r.Close(ctx) })
		if _, err := kernel.Instantiate(ctx, r); err != nil {
			b.Fatal(err)
		}
		cm, err := r.CompileModule(ctx, wasm)
		if err != nil {
			b.Fatal(err)
		}
		cfg := wazero.NewModuleConfig().WithName("")
		return func() {
			k, err := kernel.New(&sliceMemory{}, input)
			if err != nil {
				b.Fatal(err)
			}
			kctx, cancel := context.WithTimeout(kernel.With(ctx, k), time.Minute)
			defer cancel()
			m, err := r.InstantiateModule(kctx, cm, cfg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.ExportedFunction("execute").Call(kctx); err != nil {
				b.Fatal(err)
			}
			m.Close(ctx)
		}
	}
	dir := b.TempDir()
	fixture(b, dir, "spin", simple("spin", `"parameters":{"n":{"type":"integer"}}`), "spin")
	rt := newRuntime(b, Config{SkillDirs: []string{dir}})
	full := func() {
		if _, err := rt.Run(context.Background(), run.Request{Skill: "spin", Args: input, Who: testAdmin}); err != nil {
			b.Fatal(err)
		}
	}
	p50 := interleave.Run(b, interleave.Contender{Name: "off", F: bare(false)}, interleave.Contender{Name: "on", F: bare(true)}, interleave.Contender{Name: "native", F: full})
	b.ReportMetric(p50["on"]/p50["off"], "on/off")
	b.ReportMetric(p50["native"]/p50["off"], "native/off")
}

// BenchmarkEngineGoHello runs the bundled Go hello (standard Go, wasip1: ~6 ms of instantiation)
// as a full native run against the same module instantiated and called on a bare wazero runtime
// holding WASI, the kernel and the host functions. Target: native throughput >= 0.8x the floor's,
// that is native/floor <= 1.25.
func BenchmarkEngineGoHello(b *testing.B) {
	wasm, err := os.ReadFile("../skills/hello/" + spec.ModuleFile)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(1024).WithCompilationCache(wazero.NewCompilationCache()))
	b.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	if _, err := kernel.Instantiate(ctx, r); err != nil {
		b.Fatal(err)
	}
	if _, err := extismhost.Instantiate(ctx, r); err != nil {
		b.Fatal(err)
	}
	cm, err := r.CompileModule(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	grant := &hostfuncs.Grant{Limits: hostfuncs.Limits{MaxLogBytes: 1 << 20}}
	floor := func() {
		k, err := kernel.New(&sliceMemory{}, []byte(`{"name":"x"}`))
		if err != nil {
			b.Fatal(err)
		}
		cctx := extismhost.WithKernel(ctx, hostfuncs.NewCall(grant), k)
		m, err := r.InstantiateModule(cctx, cm, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.ExportedFunction("_initialize").Call(cctx); err != nil {
			b.Fatal(err)
		}
		if _, err := m.ExportedFunction("execute").Call(cctx); err != nil {
			b.Fatal(err)
		}
		m.Close(ctx)
	}
	rt := newRuntime(b, Config{SkillDirs: []string{"../skills"}})
	native := func() {
		if _, err := rt.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{"name":"x"}`), Who: testAdmin}); err != nil {
			b.Fatal(err)
		}
	}
	pooled := newRuntime(b, Config{SkillDirs: []string{"../skills"}, Shared: newShared(b, SharedConfig{WarmInstances: 2})})
	fromPool := func() {
		if _, err := pooled.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{"name":"x"}`), Who: testAdmin}); err != nil {
			b.Fatal(err)
		}
	}
	idle := func() { // at idle: the pool has refilled since the last run
		for st := pooled.Stats(); st.WarmMade > 0 && st.WarmMade-st.WarmHits < 2; st = pooled.Stats() {
			time.Sleep(100 * time.Microsecond)
		}
	}
	p50 := interleave.Run(b, interleave.Contender{Name: "floor", F: floor}, interleave.Contender{Name: "native", F: native},
		interleave.Contender{Name: "pool", F: fromPool, Settle: idle})
	b.ReportMetric(p50["native"]/p50["floor"], "native/floor")
	b.ReportMetric(p50["pool"]/p50["floor"], "pool/floor")
	if st := pooled.Stats(); st.WarmMade > 0 {
		b.ReportMetric(float64(st.WarmRefillNs)/float64(st.WarmMade), "refill-ns/instance")
		b.ReportMetric(float64(st.WarmHits)/float64(b.N+2), "pool-hit-rate")
	}
	no, nb := allocs(native)
	b.ReportMetric(no, "native-allocs/op")
	b.ReportMetric(nb, "native-B/op")
}

// sliceMemory is an unbounded kernel Memory for the floors.
type sliceMemory struct{ buf []byte }

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		m.buf = append(m.buf, make([]byte, int(size)-len(m.buf))...)
	}
	return m.buf
}
