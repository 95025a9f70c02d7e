package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/spec"
)

// pipelineRuntime serves quick WAT skills: hello, echo, and loop (never returns; timeoutMs as
// given), with cfg's history on a Shared of its own with admission.
func pipelineRuntime(t *testing.T, cfg Config, admission Admission, loopMs int) *Runtime {
	t.Helper()
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", `"version":"1.0.0"`), "hello")
	fixture(t, dir, "echo", simple("echo", `"parameters":{"type":"object"}`), "echo")
	fixture(t, dir, "strict", simple("strict", `"parameters":{"n":{"type":"integer","required":true}}`), "echo")
	fixture(t, dir, "loop", simple("loop", `"limits":{"timeoutMs":`+strconv.Itoa(loopMs)+`}`), "loop")
	cfg.SkillDirs, cfg.Shared = []string{dir}, newShared(t, SharedConfig{Admission: admission})
	rt := newRuntime(t, cfg)
	// Compile every module now: a test that times runs against each other must not wait for a
	// compilation (in a child process, slow under -race on a busy machine) in the middle. Not
	// for the tests of the memory budget, which count what warm modules hold.
	if admission.MemoryBudget != 0 {
		return rt
	}
	compileNow(t, rt, "hello", "echo", "strict", "loop")
	return rt
}

// runCharge is what a run of m is charged on rt, compiled as rt compiles it (its call stack's
// weights measured or not).
func runCharge(t *testing.T, rt *Runtime, m *engine.Module) int64 {
	t.Helper()
	en, err := rt.engine.Acquire(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.engine.Release(en)
	return engine.RunCharge(m, en.Value())
}

// compileNow compiles the modules of skills ids of rt, so that a test that times a run starts
// its clock after the compilation (in a child process, slow under -race on a busy machine).
func compileNow(t *testing.T, rt *Runtime, ids ...string) {
	t.Helper()
	for _, id := range ids {
		s, err := rt.Skill(id)
		if err != nil {
			t.Fatal(err)
		}
		s.in().Verified() // the engine compiles checked skills: Run checks them first
		m := engineModule(s.in())
		en, err := rt.engine.Acquire(context.Background(), &m)
		if err != nil {
			t.Fatalf("compile %s: %v", id, err)
		}
		rt.engine.Release(en)
	}
}

// startLoop starts a loop run and returns once it is running (its "running" event), with a
// channel of its result.
func startLoop(t *testing.T, rt *Runtime, ctx context.Context) <-chan *run.Result {
	t.Helper()
	running := make(chan struct{})
	done := make(chan *run.Result, 1)
	var once, sent sync.Once
	send := func(r *run.Result) { sent.Do(func() { done <- r }) }
	go func() {
		// The result comes from the "result" event, sent while the run still counts as in
		// flight, so a test that sees Close return sees it; an unadmitted run sends no events.
		res, _ := rt.Run(ctx, run.Request{Skill: "loop", OnEvent: func(e run.Event) {
			switch {
			case e.Status == "running":
				once.Do(func() { close(running) })
			case e.Type == "result":
				send(e.Result)
			}
		}, Who: testAdmin})
		once.Do(func() { close(running) })
		send(res)
	}()
	<-running
	return done
}

func TestRunAfterClose(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{}, 1000)
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var events int
	res, err := rt.Run(context.Background(), run.Request{Skill: "hello", OnEvent: func(run.Event) { events++ }, Who: testAdmin})
	if !errors.Is(err, run.ErrClosed) || !errors.Is(err, run.ErrBusy) || res == nil || res.Error == nil || res.Error.Kind != run.KindBusy {
		t.Fatalf("Run after Close: %+v, %v; want busy matching ErrClosed", res, err)
	}
	if events != 0 {
		t.Errorf("%d events for a run refused by a closed runtime", events)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Close waits for the runs in flight, and refuses the ones still waiting for admission.
func TestCloseWaitsForRunsInFlight(t *testing.T) {
	t.Parallel()
	// The run in flight loops until the test cancels it (its own timeout is 30 s, the default
	// ceiling): Close comes while it runs however slowly a loaded machine gets there, and the
	// test, not a clock, says when it ends.
	rt := pipelineRuntime(t, Config{}, Admission{MaxRuns: 1}, 30_000)
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	first := startLoop(t, rt, runCtx)
	queued := make(chan error, 1)
	go func() {
		_, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin})
		queued <- err
	}()
	eventually(t, "a run to queue", func() bool { return rt.Stats().Admission.Queued == 1 })
	closed := make(chan error, 1)
	go func() { closed <- rt.Close(context.Background()) }()
	// Close refuses the queued run at once, and waits for the one in flight, which only the
	// test ends.
	if err := <-queued; !errors.Is(err, run.ErrClosed) {
		t.Errorf("queued run: %v, want ErrClosed", err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a run was in flight", err)
	default:
	}
	stopRun()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close returned: the run in flight has ended.
	select {
	case res := <-first:
		if res.Error == nil || res.Error.Kind != run.KindCanceled {
			t.Errorf("run in flight: %+v, want canceled by its caller", res.Error)
		}
	default:
		t.Fatal("Close returned before the run in flight ended")
	}
}

// A Close whose context ends first stops the runs in flight (canceled) and says so.
func TestCloseStopsRunsWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{}, 60_000)
	first := startLoop(t, rt, context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := rt.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want its context's deadline", err)
	}
	res := <-first
	if res.Error == nil || res.Error.Kind != run.KindCanceled || !strings.Contains(res.Error.Message, "runtime was closed") {
		t.Errorf("run stopped by Close: %+v, want canceled by the runtime's closing", res.Error)
	}
}

// MaxRuns 1 and MaxQueue 1: one runs, one waits, the next is refused at once, busy, with a
// retry hint and no events; when the slot frees, the queued one runs. The first loops until the
// test cancels it, so no clock decides when the slot frees.
func TestAdmissionQueueFull(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{MaxRuns: 1, MaxQueue: 1}, 30_000)
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	first := startLoop(t, rt, runCtx)
	queued := make(chan *run.Result, 1)
	go func() {
		res, _ := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin})
		queued <- res
	}()
	eventually(t, "a run to queue", func() bool { return rt.Stats().Admission.Queued == 1 })
	var events int
	res, err := rt.Run(context.Background(), run.Request{Skill: "hello", OnEvent: func(run.Event) { events++ }, Who: testAdmin})
	var re *run.Error
	if !errors.As(err, &re) || re.Kind != run.KindBusy || re.RetryAfter <= 0 || errors.Is(err, run.ErrClosed) {
		t.Fatalf("third run: %+v, %v; want busy with RetryAfter", res.Error, err)
	}
	if events != 0 {
		t.Errorf("%d events for a refused run", events)
	}
	stopRun()
	if r := <-first; r.Error == nil || r.Error.Kind != run.KindCanceled {
		t.Errorf("first: %+v", r.Error)
	}
	if r := <-queued; !r.Success {
		t.Errorf("queued run: %+v", r.Error)
	}
	if st := rt.Stats().Admission; st.PeakRunning != 1 {
		t.Errorf("peak running %d, want 1", st.PeakRunning)
	}
}

func TestAdmissionMaxWait(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{MaxRuns: 1, MaxWait: 50 * time.Millisecond}, 30_000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startLoop(t, rt, ctx)
	_, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin})
	if !errors.Is(err, run.ErrBusy) || !strings.Contains(err.Error(), "waited 50ms") {
		t.Errorf("run past MaxWait: %v, want busy", err)
	}
	cancel()
	<-first
}

// A caller that gives up while its run waits for admission gets canceled, and leaves the queue.
func TestAdmissionCallerGivesUp(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{MaxRuns: 1}, 30_000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startLoop(t, rt, ctx)
	wctx, wcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer wcancel()
	_, err := rt.Run(wctx, run.Request{Skill: "hello", Who: testAdmin})
	if !errors.Is(err, run.ErrTimeout) || !strings.Contains(err.Error(), "waited to be admitted") {
		t.Errorf("run whose caller's deadline passed in the queue: %v", err)
	}
	if q := rt.Stats().Admission.Queued; q != 0 {
		t.Errorf("%d left in the queue", q)
	}
	cancel()
	<-first
}

// The memory budget: a run whose charge exceeds the whole budget is refused as memory_limit;
// two runs whose charges do not fit together run one after the other.
func TestAdmissionMemoryBudget(t *testing.T) {
	t.Parallel()
	probe := pipelineRuntime(t, Config{}, Admission{}, 300)
	s, _ := probe.Skill("loop")
	m := engineModule(s.in())
	charge := runCharge(t, probe, &m)
	warm := engine.WarmCharge(&m)

	tiny := pipelineRuntime(t, Config{}, Admission{MemoryBudget: charge - 1, CompileMemory: 128 << 20}, 300)
	if _, err := tiny.Run(context.Background(), run.Request{Skill: "loop", Who: testAdmin}); !errors.Is(err, run.ErrMemoryLimit) || !strings.Contains(err.Error(), "whole memory budget") {
		t.Errorf("run over the whole budget: %v", err)
	}

	// Room for one loop run and the warm modules, not for two runs.
	small := Admission{CompileMemory: 128 << 20}.withDefaults() // compiling fits beside a run
	rt := pipelineRuntime(t, Config{}, Admission{MemoryBudget: charge + 2*warm + warm/2, CompileMemory: small.CompileMemory}, 200)
	if engine.CompileCharge(small.toEngine(), &m) > charge {
		t.Fatalf("the test's arithmetic: a compilation (%d) costs more than a run (%d)", engine.CompileCharge(small.toEngine(), &m), charge)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if res, _ := rt.Run(context.Background(), run.Request{Skill: "loop", Who: testAdmin}); res.Error == nil || res.Error.Kind != run.KindTimeout {
				t.Errorf("run: %+v", res.Error)
			}
		})
	}
	wg.Wait()
	st := rt.Stats().Admission
	if st.PeakRunning != 1 {
		t.Errorf("peak running %d with room for one run's charge, want 1", st.PeakRunning)
	}
	if st.PeakMemoryInUse > st.MemoryBudget {
		t.Errorf("peak charge %d over the budget %d", st.PeakMemoryInUse, st.MemoryBudget)
	}
	if st.Running != 0 || st.MemoryInUse != warm {
		t.Errorf("after the runs: %+v; want nothing running and only the warm module (%d) charged", st, warm)
	}
}

// Compiled modules kept warm give way to runs: with room for one warm module and one run, a run of
// another skill evicts the idle one.
func TestWarmModulesAreEvictedForRuns(t *testing.T) {
	t.Parallel()
	probe := pipelineRuntime(t, Config{}, Admission{}, 300)
	hs, _ := probe.Skill("hello")
	es, _ := probe.Skill("echo")
	h, e := engineModule(hs.in()), engineModule(es.in())
	// Room for a run and one warm module and a half: never two warm modules beside a run.
	a := Admission{CompileMemory: 128 << 20}.withDefaults()
	budget := max(runCharge(t, probe, &h), runCharge(t, probe, &e), engine.CompileCharge(a.toEngine(), &h), engine.CompileCharge(a.toEngine(), &e)) + max(engine.WarmCharge(&h), engine.WarmCharge(&e))*3/2
	rt := pipelineRuntime(t, Config{}, Admission{MemoryBudget: budget, CompileMemory: a.CompileMemory}, 300)
	for _, id := range []string{"hello", "echo", "hello"} {
		if res, err := rt.Run(context.Background(), run.Request{Skill: id, Args: []byte(`{}`), Who: testAdmin}); err != nil {
			t.Fatalf("%s: %v %+v", id, err, res.Error)
		}
	}
	st := rt.Stats()
	if st.Evictions < 2 || st.WarmModules != 1 {
		t.Errorf("evictions %d, warm modules %d; want each run to evict the other skill's module", st.Evictions, st.WarmModules)
	}
	if st.Admission.MemoryInUse > st.Admission.MemoryBudget {
		t.Errorf("charged %d over the budget %d", st.Admission.MemoryInUse, st.Admission.MemoryBudget)
	}
}

// Events: none for a request refused before admission; started, running, result for a run.
func TestEventsOnlyForAdmittedRuns(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{}, 300)
	for _, req := range []run.Request{{Skill: "nope", Who: testAdmin}, {Skill: "strict", Args: []byte(`{"n":"x"}`), Who: testAdmin}, {Skill: "hello", Argv: []string{"x"}, Who: testAdmin}} {
		var events []run.Event
		req.OnEvent = func(e run.Event) { events = append(events, e) }
		if _, err := rt.Run(context.Background(), req); err == nil || len(events) != 0 {
			t.Errorf("%s: err %v, events %v; want a refusal without events", req.Skill, err, events)
		}
	}
	var types []string
	res, err := rt.Run(context.Background(), run.Request{Skill: "strict", Args: []byte(`{"n":1}`), OnEvent: func(e run.Event) {
		types = append(types, e.Type+":"+e.Status)
		if e.RunID == "" {
			t.Error("an event without a run id")
		}
	}, Who: testAdmin})
	if err != nil || strings.Join(types, " ") != "status:started status:running result:" {
		t.Errorf("events %v, err %v", types, err)
	}
	if res.Digest == "" || !strings.HasPrefix(res.Digest, "sha256:") {
		t.Errorf("result digest %q", res.Digest)
	}
}

func TestRunRecordsAndStats(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{History: History{MaxRuns: 2}}, Admission{}, 300)
	var ids []string
	for i, face := range []run.Face{run.FaceHTTP, run.FaceMCP, run.FaceCLI} {
		res, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(`{"i":` + strconv.Itoa(i) + `}`), Face: face, Who: access.Local("key-" + string(face))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.RunID)
	}
	if _, ok := rt.RunRecord(testAdmin, ids[0]); ok {
		t.Error("the oldest record outlived History.MaxRuns")
	}
	rec, ok := rt.RunRecord(testAdmin, ids[2])
	if !ok || rec.Face != run.FaceCLI || rec.Caller != "key-cli" || string(rec.Result.Result) != `{"i":2}` || rec.StartedAt.IsZero() {
		t.Errorf("record: %+v %v", rec, ok)
	}
	// Refused requests are counted (with no skill label for an unknown id), never recorded.
	res, _ := rt.Run(context.Background(), run.Request{Skill: "no-such-skill", Face: run.FaceHTTP, Who: testAdmin})
	if _, ok := rt.RunRecord(testAdmin, res.RunID); ok {
		t.Error("a refused request was recorded")
	}
	want := map[RunCount]bool{
		{Skill: "echo", Face: run.FaceHTTP, Outcome: "success", Count: 1}: true,
		{Skill: "echo", Face: run.FaceMCP, Outcome: "success", Count: 1}:  true,
		{Skill: "echo", Face: run.FaceCLI, Outcome: "success", Count: 1}:  true,
		{Skill: "", Face: run.FaceHTTP, Outcome: "not_found", Count: 1}:   true,
	}
	st := rt.Stats()
	for _, c := range st.Runs {
		if !want[c] {
			t.Errorf("unexpected count %+v", c)
		}
		delete(want, c)
	}
	if len(want) != 0 || st.DurationCount != 3 {
		t.Errorf("missing counts %v; %d timed runs, want 3", want, st.DurationCount)
	}
}

// A record larger than a quarter of History.MaxBytes is kept without its result and logs, and
// the records never hold more than MaxBytes in all.
func TestHistoryIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{History: History{MaxBytes: 64 << 10}}, Admission{}, 300)
	big := `{"s":"` + strings.Repeat("x", 20<<10) + `"}`
	var ids []string
	for range 10 {
		res, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(big), Who: testAdmin})
		if err != nil || len(res.Result) < 20<<10 {
			t.Fatalf("run: %v (%d bytes of result)", err, len(res.Result))
		}
		ids = append(ids, res.RunID)
	}
	rec, ok := rt.RunRecord(testAdmin, ids[9])
	if !ok || !rec.Trimmed || rec.Result.Result != nil || !rec.Success {
		t.Errorf("the big record: %v trimmed %v, %d bytes of result", ok, rec.Trimmed, len(rec.Result.Result))
	}
	rt.history.mu.Lock()
	bytes := rt.history.bytes
	rt.history.mu.Unlock()
	if bytes > 64<<10 {
		t.Errorf("history holds %d bytes, over its 64 KiB", bytes)
	}
}

func TestRunTakesNoArgvOrStdin(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{}, 300)
	for _, req := range []run.Request{{Skill: "hello", Argv: []string{"-x"}, Who: testAdmin}, {Skill: "hello", Stdin: []byte("in"), Who: testAdmin}} {
		if _, err := rt.Run(context.Background(), req); !errors.Is(err, run.ErrInvalidArgs) || !strings.Contains(err.Error(), "JSON arguments only") {
			t.Errorf("%+v: %v", req, err)
		}
	}
}

// Reload rereads Config.PolicyFile; a broken file changes nothing.
func TestPolicyFileReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	fixture(t, skills, "envtest", simple("envtest", `"permissions":{"env":["GREETING"]}`), "hello")
	pol := filepath.Join(dir, "policy.yaml")
	write := func(s string) {
		if err := os.WriteFile(pol, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("env:\n  GREETING: hello\n")
	rt := newRuntime(t, Config{SkillDirs: []string{skills}, PolicyFile: pol})
	granted := func() []string {
		s, err := rt.Skill("envtest")
		if err != nil {
			t.Fatal(err)
		}
		return s.Grant().Env
	}
	before, _ := rt.Skill("envtest")
	if g := granted(); len(g) != 1 {
		t.Fatalf("granted %v, want GREETING", g)
	}
	write("env: {}\n")
	if err := rt.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := granted(); len(g) != 0 {
		t.Errorf("after the policy dropped it: granted %v", g)
	}
	// A version loaded under the old policy keeps its grant: that is what a run in flight holds.
	if g := before.Grant().Env; len(g) != 1 {
		t.Errorf("the pinned version's grant changed: %v", g)
	}
	write("env: [not, a, mapping\n")
	var pe *policy.Error
	if err := rt.Reload(context.Background()); !errors.As(err, &pe) {
		t.Errorf("broken policy: %v, want a *PolicyError", err)
	}
	if g := granted(); len(g) != 0 {
		t.Errorf("a broken policy changed the grants: %v", g)
	}
	if _, err := New(context.Background(), Config{PolicyFile: pol, Policy: &policy.Policy{}}); err == nil {
		t.Error("New accepted both Policy and PolicyFile")
	}
}

// What Skills hands out is a copy: changing it changes nothing for the next caller or a run.
func TestSkillViewsAreCopies(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{}, 300)
	s, _ := rt.Skill("strict")
	m := s.Manifest()
	m.Entrypoint, m.Limits.TimeoutMs = "nope", 1
	m.Tags = append(m.Tags, "x")
	g := s.Grant()
	g.Limits.MemoryMiB = 4096
	if s.Manifest().Entrypoint != "execute" || s.Grant().Limits.MemoryMiB != spec.DefaultLimits.MemoryMiB {
		t.Error("changing a returned Manifest or Grant changed the skill")
	}
	if res, err := rt.Run(context.Background(), run.Request{Skill: "strict", Args: []byte(`{"n":1}`), Who: testAdmin}); err != nil {
		t.Errorf("run after the caller's changes: %v %+v", err, res.Error)
	}
	pol := &policy.Policy{Network: []string{"example.com"}}
	rt2 := newRuntime(t, Config{Policy: pol})
	pol.Network[0] = "*"
	if p := rt2.policy.Load(); p.Network[0] != "example.com" {
		t.Error("the runtime shares the caller's Policy")
	}
}

// Compilations are admitted one at a time (MaxCompiles 1 by default): two Go guests compiled
// without a cache, at once, take turns; both then run.
func TestCompilationsAreBounded(t *testing.T) {
	t.Parallel()
	// MaxWait is long: the second compilation waits for the first, which takes a minute or more
	// under -race on a busy machine.
	rt, err := New(context.Background(), Config{SkillDirs: []string{"../skills"}, Shared: newShared(t, SharedConfig{NoCache: true, Admission: Admission{MaxWait: 10 * time.Minute}})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	var wg sync.WaitGroup
	for _, req := range []run.Request{{Skill: "hello", Args: []byte(`{"name":"a"}`), Who: testAdmin}, {Skill: "word-count", Args: []byte(`{"text":"a b"}`), Who: testAdmin}} {
		wg.Go(func() {
			if _, err := rt.Run(context.Background(), req); err != nil {
				t.Errorf("%s: %v", req.Skill, err)
			}
		})
	}
	wg.Wait()
	if st := rt.Stats(); st.Compiles != 2 || st.Admission.PeakCompiling != 1 {
		t.Errorf("%d compiles, %d at once; want 2, one at a time", st.Compiles, st.Admission.PeakCompiling)
	}
}

// A run that asks not to wait (NoWait) is refused at once, busy with ErrNoRoomNow, when the
// slots are taken, without joining the queue or sending an event; with room it runs, under the
// id it was given when it was given one, and an id the runtime would not make is refused.
func TestNoWaitRunsNowOrNever(t *testing.T) {
	t.Parallel()
	rt := pipelineRuntime(t, Config{}, Admission{MaxRuns: 1}, 30_000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startLoop(t, rt, ctx)
	var events int
	res, err := rt.Run(context.Background(), run.Request{Skill: "hello", NoWait: true, OnEvent: func(run.Event) { events++ }, Who: testAdmin})
	if !errors.Is(err, run.ErrNoRoomNow) || !errors.Is(err, run.ErrBusy) || res.Error == nil || !strings.Contains(res.Error.Message, "1 of 1 run slots are taken") {
		t.Fatalf("a run that would not wait: %+v, %v", res.Error, err)
	}
	if q := rt.Stats().Admission.Queued; q != 0 || events != 0 {
		t.Errorf("queued %d, events %d; want none", q, events)
	}
	cancel()
	<-first // its result event comes before its slot is given back
	eventually(t, "the slot to be free", func() bool { return rt.Stats().Admission.Running == 0 })
	// Yield: runs that came first wait elsewhere, so this one is refused though there is room.
	res, err = rt.Run(context.Background(), run.Request{Skill: "hello", NoWait: true, Yield: true, Who: testAdmin})
	if !errors.Is(err, run.ErrNoRoomNow) || res.Error == nil || !strings.Contains(res.Error.Message, "wait in the cluster's queue") {
		t.Fatalf("a run that yields to runs waiting elsewhere: %+v, %v", res.Error, err)
	}
	const id = "run_0123456789abcdef01234567"
	res, err = rt.Run(context.Background(), run.Request{Skill: "hello", NoWait: true, ID: id, Who: testAdmin})
	if err != nil || res.RunID != id {
		t.Fatalf("with room: %+v, %v; want a run with id %s", res, err, id)
	}
	for _, bad := range []string{"run_1", "RUN_0123456789abcdef01234567", "run_0123456789ABCDEF01234567", "x.>"} {
		if res, err := rt.Run(context.Background(), run.Request{Skill: "hello", ID: bad, Who: testAdmin}); !errors.Is(err, run.ErrInvalidArgs) || res.RunID == bad {
			t.Errorf("id %q: %v, run id %q", bad, err, res.RunID)
		}
	}
}
