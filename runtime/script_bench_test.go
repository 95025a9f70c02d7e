package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
)

// BenchmarkScriptRun is a full rt.Run of a small JavaScript skill (arguments validated, one host
// call, a result) against its floor: a bare instantiate of the same interpreter plus the restore
// of its snapshot, with the run's memory allocator, measured interleaved in the same rounds.
// Target: run <= 1.5x floor; absolute <= 2 ms p50.
//
//	go test -run '^$' -bench ScriptRun -benchtime 2000x ./runtime/
func BenchmarkScriptRun(b *testing.B) {
	benchScriptRun(b, "execute.js", `export function execute(args, ctx) { return {hello: args.name, n: args.n * 2, e: ctx.env("A")}; }`)
}

// benchScriptRun measures a full rt.Run of the small script skill code (its file named file)
// against its interpreter's floor, interleaved, and reports run/floor.
func benchScriptRun(b *testing.B, file, code string) {
	dir := b.TempDir()
	scriptFixture(b, dir, "small", simple("small", `"parameters":{"name":{"type":"string"},"n":{"type":"integer"}},"permissions":{"env":["A"]}`),
		map[string]string{file: code})
	rt := newRuntime(b, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Env: map[string]string{"A": "a"}}})
	ctx := context.Background()
	runOne := func() {
		if _, err := rt.Run(ctx, run.Request{Skill: "small", Args: []byte(`{"name":"x","n":21}`), Who: testAdmin}); err != nil {
			b.Fatal(err)
		}
	}
	runOne()
	s, err := rt.Skill("small")
	if err != nil {
		b.Fatal(err)
	}
	en, err := rt.interps.Acquire(ctx, s.in().Lang(), s.Grant().Limits.MemoryMiB)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.interps.Release(en)
	ip := en.Value()
	floor := func() {
		meter := engine.NewMemoryMeter(uint64(s.Grant().Limits.MemoryMiB) << 20)
		defer meter.Release()
		mctx := experimental.WithMemoryAllocator(ctx, meter)
		var err error
		if ip.JS != nil {
			err = ip.JS.Start(mctx)
		} else {
			err = ip.Py.Start(ctx, meter)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	p50 := interleave.Run(b, interleave.Contender{Name: "floor", F: floor}, interleave.Contender{Name: "run", F: runOne})
	b.ReportMetric(p50["run"]/p50["floor"], "run/floor")
}

// BenchmarkCreatedSkillFirstRun measures the first run of a script skill just installed (as
// create_skill installs it: the check, the bundle and the digest are the first run's) against
// its later runs, interleaved: each round installs a new skill, runs it once ("first") and runs
// an installed one again ("later"). Target: first <= 2x later.
//
//	go test -run '^$' -bench CreatedSkillFirstRun -benchtime 200x ./runtime/
func BenchmarkCreatedSkillFirstRun(b *testing.B) {
	ctx := context.Background()
	rt := newRuntime(b, Config{SkillDirs: []string{b.TempDir()}, Policy: &policy.Policy{AgentSkills: policy.AgentSkills{Enabled: true}}})
	files := func(id string) map[string][]byte {
		return map[string][]byte{
			"skill.json": []byte(simple(id, `"parameters":{"a":{"type":"number"},"b":{"type":"number"}}`)),
			"execute.ts": []byte(`import { add } from "./math"; export function execute(args: {a: number, b: number}) { return add(args.a, args.b); }`),
			"math.ts":    []byte(`export const add = (x: number, y: number): number => x + y;`),
		}
	}
	if _, err := rt.Install(ctx, "warm", files("warm"), InstallOptions{Who: asAgent(testAdmin)}); err != nil {
		b.Fatal(err)
	}
	runOne := func(id string) {
		if _, err := rt.Run(ctx, run.Request{Skill: id, Args: []byte(`{"a":1,"b":2}`), Who: testAdmin}); err != nil {
			b.Fatal(err)
		}
	}
	runOne("warm")
	n, fresh := 0, false
	install := func() { // untimed: create_skill answers when it is done; the run after it is timed
		n++
		if _, err := rt.Install(ctx, fmt.Sprintf("s%d", n), files(fmt.Sprintf("s%d", n)), InstallOptions{Who: asAgent(testAdmin)}); err != nil {
			b.Fatal(err)
		}
		fresh = true
	}
	first := func() {
		if !fresh { // the warm-up calls, which have no Settle
			install()
		}
		runOne(fmt.Sprintf("s%d", n))
		fresh = false
	}
	p50 := interleave.Run(b, interleave.Contender{Name: "later", F: func() { runOne("warm") }},
		interleave.Contender{Name: "first", F: first, Settle: install})
	b.ReportMetric(p50["first"]/p50["later"], "first/later")
}

// BenchmarkPythonRun is a full rt.Run of a small Python skill (arguments validated, one host
// call, a result, the grant's mounts and a private /tmp made and removed) against its floor: a
// bare instantiate of the same snapshotted interpreter, with the run's memory allocator,
// interleaved. Targets: run <= 1.5x floor; absolute <= 10 ms p50.
//
//	go test -run '^$' -bench PythonRun -benchtime 200x ./runtime/
func BenchmarkPythonRun(b *testing.B) {
	benchScriptRun(b, "execute.py", "def execute(args, ctx):\n    return {'hello': args['name'], 'n': args['n'] * 2, 'e': ctx.env('A')}\n")
}
