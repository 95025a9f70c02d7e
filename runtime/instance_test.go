package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
)

// compiledNative returns the native module compiled for skill id, which must have run.
func compiledNative(t *testing.T, rt *Runtime, id string) *engine.NativeModule {
	t.Helper()
	s, err := rt.Skill(id)
	if err != nil {
		t.Fatal(err)
	}
	m := engineModule(s.in())
	en, err := rt.engine.Acquire(context.Background(), &m) // the compiled one: a hit
	if err != nil {
		t.Fatal(err)
	}
	defer rt.engine.Release(en)
	if n := en.Value().Native; n != nil {
		return n
	}
	t.Fatalf("%s: no native module compiled", id)
	return nil
}

// A guest that never returns is stopped at its deadline, or when its caller gives up, by the
// checks instrumented into its code (wazero's interruption is off for it); one that cannot be
// instrumented (a start function) is stopped by wazero's interruption. Each case runs with the
// garbage collector forced during the run: a guest that spun without yielding would hang it.
func TestDeadlineStopsEveryGuest(t *testing.T) {
	dir := t.TempDir()
	// Each guest twice: with a short timeout, and held (30 s, the default ceiling) for the
	// caller to cancel, so that a loaded machine, slow to cancel, never makes the deadline come
	// first.
	for _, timeout := range []struct{ suffix, ms string }{{"", "150"}, {"-held", "30000"}} {
		limits := `"limits":{"timeoutMs":` + timeout.ms + `}`
		fixture(t, dir, "loop"+timeout.suffix, simple("loop"+timeout.suffix, limits), "loop")
		fixture(t, dir, "spin"+timeout.suffix, simple("spin"+timeout.suffix, `"parameters":{"n":{"type":"integer"}},`+limits), "spin")
		fixture(t, dir, "startloop"+timeout.suffix, simple("startloop"+timeout.suffix, limits), "startloop")
		fixture(t, dir, "sleep"+timeout.suffix, simple("sleep"+timeout.suffix, limits), "sleep")
	}
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})

	for _, tc := range []struct {
		skill, args string
		stoppable   bool
	}{
		{"loop", "", true},
		{"spin", `{"n":4000000000}`, true},
		{"startloop", "", false},
		{"sleep", "", true},
	} {
		t.Run(tc.skill, func(t *testing.T) {
			gcDone := make(chan struct{})
			go func() {
				defer close(gcDone)
				time.Sleep(50 * time.Millisecond)
				goruntime.GC()
			}()
			res, err := rt.Run(context.Background(), run.Request{Skill: tc.skill, Args: []byte(tc.args), Who: testAdmin})
			<-gcDone
			if !errors.Is(err, run.ErrTimeout) || res.Error.Kind != run.KindTimeout {
				t.Fatalf("got %v (%+v), want a timeout", err, res.Error)
			}
			if got := compiledNative(t, rt, tc.skill).Stoppable; got != tc.stoppable {
				t.Fatalf("stoppable %v, want %v", got, tc.stoppable)
			}

			// The caller canceling ends the run the same way, as canceled.
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(30*time.Millisecond, cancel)
			res, err = rt.Run(ctx, run.Request{Skill: tc.skill + "-held", Args: []byte(tc.args), Who: testAdmin})
			if !errors.Is(err, run.ErrCanceled) || res.Error.Kind != run.KindCanceled {
				t.Fatalf("canceled: got %v (%+v)", err, res.Error)
			}
			if ok, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin}); err != nil || !ok.Success {
				t.Fatalf("next run: %v", err)
			}
		})
	}
}

// What a run's instance writes reaches that run's log only: the runtime reuses the module
// configuration instances write through (engine.IOSlot), run after run and across concurrent runs.
func TestStdoutStaysWithItsRun(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "stdout", simple("stdout", `"parameters":{"msg":{"type":"string","required":true}}`), "stdout")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				msg := fmt.Sprintf("run-%d-%d", g, i)
				res, err := rt.Run(context.Background(), run.Request{Skill: "stdout", Args: []byte(`{"msg":"` + msg + `"}`), Who: testAdmin})
				if err != nil {
					t.Errorf("%s: %v", msg, err)
					return
				}
				var lines []string
				for _, l := range res.Logs {
					if l.Source == "stdout" {
						lines = append(lines, l.Message)
					}
				}
				if len(lines) != 1 || lines[0] != `{"msg":"`+msg+`"}` {
					t.Errorf("%s: stdout lines %q", msg, lines)
					return
				}
			}
		}()
	}
	wg.Wait()
}
