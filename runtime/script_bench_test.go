package runtime

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/internal/interleave"
)

// BenchmarkScriptRun is a full rt.Run of a small JavaScript skill (arguments validated, one host
// call, a result) against its floor: a bare instantiate of the same interpreter plus the restore
// of its snapshot, with the run's memory allocator, measured interleaved in the same rounds.
// Target: run <= 1.5x floor; absolute <= 2 ms p50.
//
//	go test -run '^$' -bench ScriptRun -benchtime 2000x ./runtime/
func BenchmarkScriptRun(b *testing.B) {
	dir := b.TempDir()
	scriptFixture(b, dir, "small", simple("small", `"parameters":{"name":{"type":"string"},"n":{"type":"integer"}},"permissions":{"env":["A"]}`),
		map[string]string{"execute.js": `export function execute(args, ctx) { return {hello: args.name, n: args.n * 2, e: ctx.env("A")}; }`})
	rt := newRuntime(b, Config{SkillDirs: []string{dir}, Policy: &Policy{Env: map[string]string{"A": "a"}}})
	ctx := context.Background()
	run := func() {
		if _, err := rt.Run(ctx, Request{Skill: "small", Args: []byte(`{"name":"x","n":21}`)}); err != nil {
			b.Fatal(err)
		}
	}
	run()
	s, err := rt.Skill("small")
	if err != nil {
		b.Fatal(err)
	}
	ip, err := rt.interps.acquire(ctx, s.lang, s.grant.Limits.MemoryMiB)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.interps.release(ip)
	floor := func() {
		meter := newMemoryMeter(uint64(s.grant.Limits.MemoryMiB) << 20)
		defer meter.release()
		if err := ip.js.Start(experimental.WithMemoryAllocator(ctx, meter)); err != nil {
			b.Fatal(err)
		}
	}
	p50 := interleave.Run(b, interleave.Contender{Name: "floor", F: floor}, interleave.Contender{Name: "run", F: run})
	b.ReportMetric(p50["run"]/p50["floor"], "run/floor")
}
