package quickjs

import (
	"context"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
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
		res, err := runWith(context.Background(), c, snap, src, []byte(`{"n":21}`), Limits{}, newHost(t, g), [16]byte{1})
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
// interleaved in the same loop so that load on the machine weighs on both alike, against the
// floor: a bare instantiate (no start function) and close of the same module; and from the
// snapshot again under a context with a deadline, as the runtime's runs are. Read the ratios;
// the absolute times swing with load.
//
//	go test -run '^$' -bench BenchmarkRun -benchtime 300x ./internal/quickjs/
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	c := compiledFor(b, 1024)
	src := skill(`(args, ctx) => ({hello: args.name, n: args.n * 2, e: ctx.env("A")})`)
	g := &hostfuncs.Grant{Env: map[string]string{"A": "a"}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 10}}
	h := newHost(b, g)
	var floor, fresh, snap, deadline time.Duration
	dctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		m, err := c.runtime.InstantiateModule(ctx, c.module, moduleConfig().WithStartFunctions())
		if err != nil {
			b.Fatal(err)
		}
		_ = m.Close(ctx)
		t1 := time.Now()
		if _, err := runWith(ctx, c, nil, src, []byte(`{"name":"x","n":21}`), Limits{}, h, [16]byte{}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := runWith(ctx, c, c.snap, src, []byte(`{"name":"x","n":21}`), Limits{}, h, [16]byte{}); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := runWith(dctx, c, c.snap, src, []byte(`{"name":"x","n":21}`), Limits{}, h, [16]byte{}); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		floor, fresh, snap, deadline = floor+t1.Sub(t0), fresh+t2.Sub(t1), snap+t3.Sub(t2), deadline+t4.Sub(t3)
	}
	n := float64(b.N)
	b.ReportMetric(float64(floor.Microseconds())/n, "floor-µs/run")
	b.ReportMetric(float64(fresh.Microseconds())/n, "fresh-µs/run")
	b.ReportMetric(float64(snap.Microseconds())/n, "snapshot-µs/run")
	b.ReportMetric(float64(fresh)/float64(snap), "fresh/snapshot")
	b.ReportMetric(float64(snap)/float64(floor), "snapshot/floor")
	// With a deadline, wazero watches the context of every call into the guest.
	b.ReportMetric(float64(deadline)/float64(snap), "deadline/snapshot")
}
