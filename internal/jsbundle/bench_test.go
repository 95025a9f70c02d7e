package jsbundle

import (
	"context"
	"testing"
)

// BenchmarkBuild bundles a three-file TypeScript skill (an entry, a sibling module, a lib/
// package) from disk.
func BenchmarkBuild(b *testing.B) {
	dir := skill(b, map[string]string{
		"execute.ts":           "import { double } from './util';\nimport pad from 'leftpad';\ninterface A { n: number }\nexport async function execute(a: A) { return pad(String(double(a.n)), 8); }\n",
		"util.ts":              "export enum K { A = 1 }\nexport const double = (n: number): number => n * 2 * K.A;\n",
		"lib/leftpad/index.js": "export default function pad(s, n) { return ' '.repeat(Math.max(0, n - s.length)) + s; }\n",
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(ctx, dir, "execute.ts", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
