package engine

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// BenchmarkCompile compiles the bundled Go hello (3.3 MB) in a child process, then loads it from
// the cache as a run does, against compiling it in this process — the floor — alternating the
// two so that both see the same machine. It reports the child's peak memory.
//
//	go test -run '^$' -bench Compile -benchtime 3x ./runtime/internal/engine/
func BenchmarkCompile(b *testing.B) {
	if !CanCompileInChild() {
		b.Skip("this test binary does not call MaybeCompileChild")
	}
	wasm, err := os.ReadFile("../../../skills/hello/execute.wasm")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const pages = 1024
	var floor, child time.Duration
	var peak int64
	for b.Loop() {
		start := time.Now()
		r := wazero.NewRuntimeWithConfig(ctx, CompileConfig(pages, false))
		if _, err := r.CompileModule(ctx, wasm); err != nil {
			b.Fatal(err)
		}
		_ = r.Close(ctx)
		floor += time.Since(start)

		dir := b.TempDir()
		start = time.Now()
		rec, _, err := compileInChild(ctx, dir, pages, Source{Wasm: wasm}, 1<<30, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		r = wazero.NewRuntimeWithConfig(ctx, CompileConfig(pages, false).WithCompilationCache(cache))
		if _, err := r.CompileModule(ctx, wasm); err != nil {
			b.Fatal(err)
		}
		_ = r.Close(ctx)
		_ = cache.Close(ctx)
		child += time.Since(start)
		peak = max(peak, rec.Peak)
	}
	b.ReportMetric(float64(child)/float64(floor), "ratio")
	b.ReportMetric(float64(floor.Milliseconds())/float64(b.N), "floor-ms/op")
	b.ReportMetric(float64(peak>>20), "child-peak-MiB")
}
