package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// BenchmarkGuests puts every language's conformance guest side by side: module size, wazero
// compile time (no cache), and the latency of a fresh run (instantiate + call with {}: every
// operation skipped, so it is the language's fixed cost). The floor, measured in the same run, is
// the smallest possible skill (testdata/wat/hello.wat) through the same runtime; "x-floor" is the
// ratio.
//
//	go test -run '^$' -bench Guests -benchtime 200x ./examples/wasm/
func BenchmarkGuests(b *testing.B) {
	mods, err := filepath.Glob("*/conformance.wasm")
	if err != nil || len(mods) == 0 {
		b.Fatal("no guests", err)
	}
	skills := b.TempDir()
	write := func(id, manifest string, wasm []byte) {
		dir := filepath.Join(skills, id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "skill.json"), []byte(manifest), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "execute.wasm"), wasm, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	hello, err := os.ReadFile("../../testdata/wasm/hello.wasm")
	if err != nil {
		b.Fatal(err)
	}
	write("floor", `{"id":"floor","name":"f","description":"d"}`, hello)
	wasm := map[string][]byte{}
	for _, m := range mods {
		lang := filepath.Dir(m)
		data, err := os.ReadFile(m)
		if err != nil {
			b.Fatal(err)
		}
		wasm[lang] = data
		write(lang, `{"id":"`+lang+`","name":"c","description":"d","parameters":{"type":"object"}}`, data)
	}
	ctx := context.Background()
	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{skills}, Shared: testengine.Shared(b, runtime.SharedConfig{CacheDir: testcache.Dir()})})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	runOne := func(id string) func() {
		return func() {
			if _, err := rt.Run(ctx, run.Request{Skill: id, Args: []byte(`{}`), Who: access.Local("test")}); err != nil {
				b.Fatal(id, err)
			}
		}
	}
	for _, m := range mods {
		lang := filepath.Dir(m)
		b.Run(lang, func(b *testing.B) {
			// Compile once without any cache: what a first run pays.
			r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
			start := time.Now()
			if _, err := r.CompileModule(ctx, wasm[lang]); err != nil {
				b.Fatal(err)
			}
			compile := time.Since(start)
			r.Close(ctx)

			guest, floor := runOne(lang), runOne("floor")
			guest()
			floor()
			b.ResetTimer()
			g := measure(b.N, guest)
			b.StopTimer()
			f := measure(b.N, floor)
			b.ReportMetric(float64(len(wasm[lang])), "bytes")
			b.ReportMetric(float64(compile.Milliseconds()), "compile-ms")
			b.ReportMetric(g/1000, "run-us")
			b.ReportMetric(g/f, "x-floor")
		})
	}
}

func measure(n int, f func()) float64 {
	start := time.Now()
	for i := 0; i < n; i++ {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}
