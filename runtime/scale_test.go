package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// manySkills writes n executable skills into dir — a minimal skill.json beside a copy of
// testdata/wasm/hello.wasm each, as scripts/genskills.sh does for the CLI — and returns dir.
func manySkills(tb testing.TB, dir string, n int) string {
	tb.Helper()
	module, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "hello.wasm"))
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("skill-%05d", i)
		sd := filepath.Join(dir, id)
		must(tb, os.MkdirAll(sd, 0o755))
		must(tb, os.WriteFile(filepath.Join(sd, "skill.json"), []byte(simple(id, "")), 0o644))
		must(tb, os.WriteFile(filepath.Join(sd, spec.ModuleFile), module, 0o644))
	}
	return dir
}

// BenchmarkScan scans 10,000 skills: cold (nothing remembered: manifests only, every skill
// unchecked) and warm (every skill checked before: a stat per file adopts its verdict).
//
//	go test -run '^$' -bench Scan ./runtime/
func BenchmarkScan(b *testing.B) {
	dir := manySkills(b, b.TempDir(), 10_000)
	logger := slog.New(slog.DiscardHandler)
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			registry.Scan([]string{dir}, &policy.Policy{}, &registry.Checks{Digests: registry.NewDigester()}, logger)
		}
	})
	b.Run("warm", func(b *testing.B) {
		c := &registry.Checks{Digests: registry.NewDigester()}
		for _, s := range registry.Scan([]string{dir}, &policy.Policy{}, c, logger).Order {
			s.Verified()
		}
		for b.Loop() {
			r := registry.Scan([]string{dir}, &policy.Policy{}, c, logger)
			if r.Order[0].Status() != catalog.StatusActive {
				b.Fatal("not adopted")
			}
		}
	})
}

// BenchmarkRunAmongMany is what `skillbox run` costs with 10,000 skills present against 10:
// each iteration makes a Runtime over each directory (as the CLI does: no background check),
// runs one skill and closes it, alternating the two so that both see the same machine. It
// reports each side's ns per run and their ratio (many/few; the goal is at most 1.5).
//
//	go test -run '^$' -bench RunAmongMany -benchtime 20x ./runtime/
func BenchmarkRunAmongMany(b *testing.B) {
	many := manySkills(b, b.TempDir(), 10_000)
	few := manySkills(b, b.TempDir(), 10)
	cache := filepath.Join(b.TempDir(), "cache")
	once := func(dir string) time.Duration {
		start := time.Now()
		rt, err := New(context.Background(), Config{SkillDirs: []string{dir}, NoBackgroundCheck: true, Shared: newShared(b, SharedConfig{CacheDir: cache})})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.Run(context.Background(), run.Request{Skill: "skill-00000", Who: testAdmin}); err != nil {
			b.Fatal(err)
		}
		must(b, rt.Close(context.Background()))
		return time.Since(start)
	}
	once(many) // the first run of each writes the index, compiles into the cache
	once(few)
	var tMany, tFew time.Duration
	for b.Loop() {
		tMany += once(many)
		tFew += once(few)
	}
	b.ReportMetric(float64(tMany.Nanoseconds())/float64(b.N), "ns/run-10000")
	b.ReportMetric(float64(tFew.Nanoseconds())/float64(b.N), "ns/run-10")
	b.ReportMetric(float64(tMany)/float64(tFew), "ratio")
}
