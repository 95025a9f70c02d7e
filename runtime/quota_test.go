package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/run"
)

// Tenants on one Shared: each Runtime has its own skills, a module both have is compiled once,
// and a tenant at its quota is refused quota_exceeded at once while another tenant's runs go on,
// all under one admission.
func TestSharedTenantsAndQuotas(t *testing.T) {
	ctx := context.Background()
	sh, err := NewShared(ctx, SharedConfig{CacheDir: cacheDir, Admission: Admission{MaxRuns: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(ctx)
	acme, globex := t.TempDir(), t.TempDir()
	// The sleep is held in flight by the test (it sleeps an hour; the test cancels it), never by
	// a clock that a loaded machine could outrun.
	fixture(t, acme, "sleep", simple("sleep", `"limits":{"timeoutMs":30000}`), "sleep")
	fixture(t, acme, "hello", simple("hello", ""), "hello")
	fixture(t, globex, "hello", simple("hello", ""), "hello")
	a, err := New(ctx, Config{Shared: sh, Tenant: "acme", SkillDirs: []string{acme},
		Quota: Quota{ConcurrentRuns: 1, RunsPerMinute: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := New(ctx, Config{Shared: sh, Tenant: "globex", SkillDirs: []string{globex}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)

	if _, err := b.Skill("sleep"); !errors.Is(err, run.ErrNotFound) {
		t.Fatalf("globex sees acme's sleep: %v", err)
	}
	if _, err := b.Run(ctx, run.Request{Skill: "sleep", Who: testAdmin}); !errors.Is(err, run.ErrNotFound) {
		t.Fatalf("globex runs acme's sleep: %v", err)
	}

	// Concurrency: one run in flight; the second is refused, not queued (queued, it would wait
	// for the sleep, which ends only when the test cancels it, and then run).
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := a.Run(sctx, run.Request{Skill: "sleep", OnEvent: func(e run.Event) {
			if e.Type == "status" && e.Status == "started" {
				close(started)
			}
		}, Who: testAdmin})
		done <- err
	}()
	<-started
	res, err := a.Run(ctx, run.Request{Skill: "hello", Who: testAdmin})
	var re *run.Error
	if !errors.Is(err, run.ErrQuotaExceeded) || !errors.As(err, &re) || re.RetryAfter <= 0 || res.Error == nil ||
		!strings.Contains(res.Error.Message, `tenant "acme" has 1 runs in flight, its quota (concurrentRuns 1)`) {
		t.Fatalf("a second concurrent run: %v (%+v)", err, res.Error)
	}
	if _, ok := a.RunRecord(testAdmin, res.RunID); ok {
		t.Error("a run refused by its quota has a record: it never ran")
	}
	// Meanwhile globex runs: acme's quota is acme's.
	res, err = b.Run(ctx, run.Request{Skill: "hello", Who: testAdmin})
	if err != nil {
		t.Fatalf("globex while acme is at its quota: %v", err)
	}
	if rec, ok := b.RunRecord(testAdmin, res.RunID); !ok || rec.Tenant != "globex" {
		t.Errorf("globex's record: %+v, %v", rec, ok)
	}
	stop()
	if err := <-done; !errors.Is(err, run.ErrCanceled) {
		t.Fatalf("the sleep: %v", err)
	}

	// Rate: 3 a minute; the sleep took one token, the refused run none.
	for i := range 2 {
		if _, err := a.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); err != nil {
			t.Fatalf("run %d within the rate: %v", i+2, err)
		}
	}
	_, err = a.Run(ctx, run.Request{Skill: "hello", Who: testAdmin})
	if !errors.Is(err, run.ErrQuotaExceeded) || !errors.As(err, &re) || re.RetryAfter < 10*time.Second ||
		!strings.Contains(err.Error(), "runsPerMinute 3") {
		t.Fatalf("the 4th run in a minute: %v", err)
	}
	// hello is the same module for both tenants: compiled once, for both.
	if st := a.Stats(); st.Compiles+st.CompileHits == 0 {
		t.Errorf("stats: %+v", st)
	}
	if n := sh.engine.Stats().Compiles; n != 2 { // sleep and hello
		t.Errorf("%d compilations for 2 distinct modules over 2 tenants", n)
	}
	if st := sh.Stats(); st.PeakRunning < 2 || st.Running != 0 {
		t.Errorf("the shared admission saw both tenants: %+v", st)
	}
}

// A tenant's Runtime that closes leaves the others running, their modules compiled.
func TestSharedRuntimeCloseLeavesTheOthers(t *testing.T) {
	ctx := context.Background()
	sh, err := NewShared(ctx, SharedConfig{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(ctx)
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	a, _ := New(ctx, Config{Shared: sh, SkillDirs: []string{dir}})
	b, _ := New(ctx, Config{Shared: sh, SkillDirs: []string{dir}})
	defer b.Close(ctx)
	for _, rt := range []*Runtime{a, b} {
		rt.Skills() // scanned: the engine keeps what each registry has
		if _, err := rt.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); !errors.Is(err, run.ErrClosed) {
		t.Fatalf("a closed tenant runs: %v", err)
	}
	before := sh.engine.Stats().Compiles
	if _, err := b.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); err != nil {
		t.Fatalf("the other tenant after one closed: %v", err)
	}
	if n := sh.engine.Stats().Compiles; n != before {
		t.Errorf("closing one tenant dropped the module the other uses (%d compilations, was %d)", n, before)
	}
}

// A negative quota is refused, on a Shared as without one. (What is the Shared's and what the
// Runtime's cannot clash: SharedConfig and Config have no field in common.)
func TestSharedConfigConflicts(t *testing.T) {
	ctx := context.Background()
	sh := newShared(t, SharedConfig{NoCache: true})
	for name, cfg := range map[string]Config{
		"own":    {Quota: Quota{RunsPerMinute: -1}},
		"shared": {Shared: sh, Quota: Quota{RunsPerMinute: -1}},
	} {
		if rt, err := New(ctx, cfg); err == nil {
			rt.Close(ctx)
			t.Errorf("%s: New accepted a negative quota", name)
		}
	}
}
