package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkColdStart is `skillbox run hello` as a new process with a warm compilation cache:
// what an agent pays to shell out to skillbox. Its floor is the same binary's `version` (process
// start, flag parsing, no runtime); "x-floor" is the ratio.
func BenchmarkColdStart(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "skillbox")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatal(err)
	}
	cache := b.TempDir()
	cmd := func(args ...string) func() {
		return func() {
			c := exec.Command(bin, append([]string{"--cache-dir", cache, "--skills", bundled}, args...)...)
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	}
	runHello, versionCmd := cmd("run", "hello"), cmd("version")
	runHello() // fills the cache: every later run is warm
	measure := func(f func()) float64 {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			f()
		}
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	b.ResetTimer()
	run := measure(runHello)
	b.StopTimer()
	floor := measure(versionCmd)
	b.ReportMetric(floor, "floor-ns/op")
	b.ReportMetric(run/floor, "x-floor")
}
