package quickjs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/interleave"
)

// The pinned reactor has the one mutable global a snapshot allows: runs use it, and a run from
// it answers as a fresh one does.
func TestSnapshotMatchesFresh(t *testing.T) {
	c := compiledFor(t, 1024)
	if c.snap == nil {
		t.Fatal("no snapshot: the reactor has state outside its memory, or setting it up failed")
	}
	src := skill(`async (args, ctx) => { const seen = typeof globalThis.leak; globalThis.leak = 1; await null;
		return {seen, env: ctx.env("A"), n: args.n * 2, d: typeof Date.now(), json: JSON.stringify({a: [1]})}; }`)
	g := &hostfuncs.Grant{Env: map[string]string{"A": "a"}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 10}}
	var out []string
	for _, snap := range []*snapshot{nil, c.snap, c.snap} {
		res, err := runWith(context.Background(), c, snap, Program{Source: src, Args: []byte(`{"n":21}`)}, newHost(t, g), [16]byte{1})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(res.Value))
	}
	want := `{"seen":"undefined","env":"a","n":42,"d":"number","json":"{\"a\":[1]}"}`
	for i, o := range out {
		if o != want {
			t.Fatalf("run %d = %s, want %s", i, o, want)
		}
	}
}

// BenchmarkRun runs a small skill (one host call) from a fresh instance and from the snapshot,
// interleaved in the same rounds (package internal/interleave) so that load on the machine weighs
// on all alike, against the floor: a bare instantiate (no start function) and close of the same
// module; and from the snapshot again under a context with a deadline, as the runtime's runs are;
// and from the bytecode, and prepared (Compiled.Prepare).
// Read the ratios; the absolute times swing with load.
//
//	go test -run '^$' -bench BenchmarkRun -benchtime 300x ./internal/quickjs/
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	c := compiledFor(b, 1024)
	src := skill(`(args, ctx) => ({hello: args.name, n: args.n * 2, e: ctx.env("A")})`)
	g := &hostfuncs.Grant{Env: map[string]string{"A": "a"}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 20}}
	h := newHost(b, g)
	dctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	run := func(ctx context.Context, snap *snapshot) func() {
		return func() {
			if _, err := runWith(ctx, c, snap, Program{Source: src, Args: []byte(`{"name":"x","n":21}`)}, h, [16]byte{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	code, err := c.Bytecode(ctx, src, "skill.js", 0)
	if err != nil {
		b.Fatal(err)
	}
	prep, err := c.Prepare(ctx, code, 16<<20)
	if err != nil {
		b.Fatal(err)
	}
	p50 := interleave.Run(b,
		interleave.Contender{Name: "floor", F: func() {
			m, err := c.runtime.InstantiateModule(ctx, c.module, moduleConfig().WithStartFunctions())
			if err != nil {
				b.Fatal(err)
			}
			_ = m.Close(ctx)
		}},
		interleave.Contender{Name: "fresh", F: run(ctx, nil)},
		interleave.Contender{Name: "snapshot", F: run(ctx, c.snap)},
		interleave.Contender{Name: "deadline", F: run(dctx, c.snap)},
		interleave.Contender{Name: "bytecode", F: func() {
			if _, err := runWith(ctx, c, c.snap, Program{Bytecode: code, Args: []byte(`{"name":"x","n":21}`)}, h, [16]byte{}); err != nil {
				b.Fatal(err)
			}
		}},
		interleave.Contender{Name: "prepared", F: func() {
			if _, err := runWith(ctx, c, c.snap, Program{Prepared: prep, Args: []byte(`{"name":"x","n":21}`)}, h, [16]byte{}); err != nil {
				b.Fatal(err)
			}
		}},
	)
	b.ReportMetric(p50["prepared"]/p50["floor"], "prepared/floor")
	b.ReportMetric(p50["prepared"]/p50["bytecode"], "prepared/bytecode")
	b.ReportMetric(p50["bytecode"]/p50["floor"], "bytecode/floor")
	b.ReportMetric(p50["snapshot"]/p50["bytecode"], "source/bytecode")
	b.ReportMetric(p50["fresh"]/p50["snapshot"], "fresh/snapshot")
	b.ReportMetric(p50["snapshot"]/p50["floor"], "snapshot/floor")
	// With a deadline, wazero watches the context of every call into the guest.
	b.ReportMetric(p50["deadline"]/p50["snapshot"], "deadline/snapshot")
}

// BenchmarkHostCall is the cost of one brokered SkillContext call (ctx.env) as a skill sees it:
// the request's JSON, the line on fd 1, the broker, the reply set in the guest and parsed. The
// median of runs making 1,000 calls less the median of runs making none, per call, interleaved.
// Target: <= 15 us.
//
//	go test -run '^$' -bench BenchmarkHostCall -benchtime 100x ./internal/quickjs/
func BenchmarkHostCall(b *testing.B) {
	ctx := context.Background()
	c := compiledFor(b, 1024)
	h := newHost(b, &hostfuncs.Grant{Env: map[string]string{"A": "a"}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 20}})
	const n = 1000
	src := skill(`(args, ctx) => { let s = 0; for (let i = 0; i < args.n; i++) s += (args.call ? ctx.env("A") : "a").length; return s; }`)
	run := func(args string) func() {
		return func() {
			if _, err := Run(ctx, c, Program{Source: src, Args: []byte(args)}, h); err != nil {
				b.Fatal(err)
			}
		}
	}
	p50 := interleave.Run(b,
		interleave.Contender{Name: "none", F: run(fmt.Sprintf(`{"n":%d,"call":false}`, n))},
		interleave.Contender{Name: "calls", F: run(fmt.Sprintf(`{"n":%d,"call":true}`, n))})
	b.ReportMetric((p50["calls"]-p50["none"])/n/1000, "us/call")
}
