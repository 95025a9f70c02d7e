package jsbundle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCache(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{
		"execute.ts": "import { v } from './util';\nexport function execute() { return v; }\n",
		"util.js":    "export const v = 'first';\n",
	})
	ctx := context.Background()
	c := NewCache(0)
	step := func(name, want string, hit bool) {
		t.Helper()
		before := c.hits
		b, err := c.Build(ctx, dir, "execute.ts", Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(b.Code, want) {
			t.Errorf("%s: bundle lacks %q", name, want)
		}
		if got := c.hits > before; got != hit {
			t.Errorf("%s: cache hit = %v, want %v", name, got, hit)
		}
	}
	write := func(rel, src string) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	step("first", "first", false)
	step("unchanged", "first", true)
	write("util.js", "export const v = 'second';\n")
	step("changed file", "second", false)
	step("unchanged again", "second", true)
	// util.ts is looked for before util.js: its appearance changes what "./util" is.
	write("util.ts", "export const v: string = 'shadow';\n")
	step("new file shadows", "shadow", false)
	// A build that fails is not remembered.
	write("util.ts", "export const v = ;\n")
	if _, err := c.Build(ctx, dir, "execute.ts", Options{}); err == nil {
		t.Fatal("a syntax error was not reported")
	}
	write("util.ts", "export const v: string = 'shadow';\n")
	step("fixed", "shadow", false)
	// Other options are another bundle.
	if _, err := c.Build(ctx, dir, "execute.ts", Options{MaxFiles: 1}); err == nil {
		t.Error("a tighter bound was served from the cache")
	}
}

// BenchmarkCacheHit rebuilds the three-file skill of BenchmarkBuild through a cache.
func BenchmarkCacheHit(b *testing.B) {
	dir := skill(b, map[string]string{
		"execute.ts":           "import { double } from './util';\nimport pad from 'leftpad';\ninterface A { n: number }\nexport async function execute(a: A) { return pad(String(double(a.n)), 8); }\n",
		"util.ts":              "export enum K { A = 1 }\nexport const double = (n: number): number => n * 2 * K.A;\n",
		"lib/leftpad/index.js": "export default function pad(s, n) { return ' '.repeat(Math.max(0, n - s.length)) + s; }\n",
	})
	ctx := context.Background()
	c := NewCache(0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Build(ctx, dir, "execute.ts", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
