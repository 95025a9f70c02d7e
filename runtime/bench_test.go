package runtime

import (
	"context"
	"os"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/extismhost"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// The benchmarks report a ratio against a floor measured in the same run, never an absolute
// threshold: "ratio" is skillbox's ns/op divided by the floor's.
//
//	go test -run '^$' -bench . ./runtime/

// wazeroFloor instantiates and calls hello.wasm with bare wazero: the Extism imports it uses are
// stubbed with the cheapest Go functions, so the floor is what no sandbox can go below.
func wazeroFloor(b *testing.B, wasm []byte) func() {
	return bareCalls(b, wasm)(0)
}

// extismFloor is Extism's own compiled-plugin instance + call, with Skillbox's host functions
// but none of the runtime around them (no schema, no grant, no result).
func extismFloor(b *testing.B, wasm []byte) func() {
	ctx := context.Background()
	cp, err := extism.NewCompiledPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(wazero.NewCompilationCache())},
		extismhost.Functions())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cp.Close(ctx) })
	call := hostfuncs.NewCall(&hostfuncs.Grant{Limits: hostfuncs.Limits{MaxLogBytes: 1 << 20}})
	cctx := extismhost.WithCall(ctx, call)
	return func() {
		p, err := cp.Instance(cctx, extism.PluginInstanceConfig{})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := p.CallWithContext(cctx, "execute", []byte("{}")); err != nil {
			b.Fatal(err)
		}
		p.Close(ctx)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// measure runs f n times and returns ns per call.
func measure(n int, f func()) float64 {
	start := time.Now()
	for i := 0; i < n; i++ {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// BenchmarkRun is a full rt.Run of a trivial skill, beside the floors, for a WAT guest and for
// the bundled Go guest (hello).
func BenchmarkRun(b *testing.B) {
	cases := []struct {
		name, dir, id string
		wazeroFloor   bool
	}{
		{"wat", "", "hello", true},
		{"go", "../skills", "hello", false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			dir := tc.dir
			if dir == "" {
				dir = b.TempDir()
				fixture(b, dir, "hello", simple("hello", ""), "hello")
			}
			rt := newRuntime(b, Config{SkillDirs: []string{dir}})
			ctx := context.Background()
			runOne := func() {
				if _, err := rt.Run(ctx, run.Request{Skill: tc.id, Who: testAdmin}); err != nil {
					b.Fatal(err)
				}
			}
			wasm, err := os.ReadFile(dir + "/" + tc.id + "/" + spec.ModuleFile)
			if err != nil {
				b.Fatal(err)
			}
			ext := extismFloor(b, wasm)
			runOne()
			ext()
			var bare func()
			if tc.wazeroFloor {
				bare = wazeroFloor(b, wasm)
				bare()
			}
			b.ResetTimer()
			skillbox := measure(b.N, runOne)
			b.StopTimer()
			extNs := measure(b.N, ext)
			b.ReportMetric(extNs, "extism-ns/op")
			b.ReportMetric(skillbox/extNs, "x-extism")
			if bare != nil {
				bareNs := measure(b.N, bare)
				b.ReportMetric(bareNs, "wazero-ns/op")
				b.ReportMetric(skillbox/bareNs, "x-wazero")
			}
		})
	}
}

// BenchmarkHostCall reports the cost of one skillbox_env call: a run making 1000 calls minus a
// run making none, over 1000. Its floor is the same guest's run without calls (hello).
func BenchmarkHostCall(b *testing.B) {
	dir := b.TempDir()
	fixture(b, dir, "hello", simple("hello", ""), "hello")
	fixture(b, dir, "envloop", simple("envloop", `"permissions":{"env":["X"]}`), "envloop")
	rt := newRuntime(b, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Env: map[string]string{"X": "1"}}})
	ctx := context.Background()
	loop := func() {
		res, err := rt.Run(ctx, run.Request{Skill: "envloop", Who: testAdmin})
		if err != nil || string(res.Result) != "0" {
			b.Fatal(err, string(res.Result))
		}
	}
	base := func() {
		if _, err := rt.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); err != nil {
			b.Fatal(err)
		}
	}
	loop()
	base()
	b.ResetTimer()
	withCalls := measure(b.N, loop)
	b.StopTimer()
	without := measure(b.N, base)
	b.ReportMetric((withCalls-without)/1000, "ns/hostcall")
	b.ReportMetric(without, "floor-ns/run")
}
