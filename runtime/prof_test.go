package runtime

import (
	"context"
	"testing"
)

func BenchmarkProfNative(b *testing.B) {
	dir := b.TempDir()
	fixture(b, dir, "hello", simple("hello", ""), "hello")
	rt := newRuntime(b, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	for b.Loop() {
		if _, err := rt.Run(ctx, Request{Skill: "hello"}); err != nil {
			b.Fatal(err)
		}
	}
}
