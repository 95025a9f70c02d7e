package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// Every hostile fixture must be contained with the right kind, and the runtime must still run the
// next skill normally afterwards.
func TestHostileModulesAreContained(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	fixture(t, dir, "loop", simple("loop", `"limits":{"timeoutMs":200}`), "loop")
	fixture(t, dir, "grow", simple("grow", `"limits":{"memoryMiB":2}`), "grow")
	fixture(t, dir, "recurse", simple("recurse", ""), "recurse")
	fixture(t, dir, "unreachable", simple("unreachable", ""), "unreachable")
	fixture(t, dir, "bigoutput", simple("bigoutput", ""), "bigoutput")
	fixture(t, dir, "badptr", simple("badptr", `"parameters":{"case":{"type":"string","required":true}}`), "badptr")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})

	tests := []struct {
		name     string
		skill    string
		args     string
		kind     run.ErrorKind
		sentinel error
		msg      string
	}{
		{"infinite loop", "loop", "", run.KindTimeout, run.ErrTimeout, "timeout of 200ms"},
		{"memory.grow bomb", "grow", "", run.KindMemoryLimit, run.ErrMemoryLimit, "limit 2 MiB"},
		{"unbounded recursion", "recurse", "", run.KindTrap, run.ErrTrap, "stack overflow"},
		{"unreachable", "unreachable", "", run.KindTrap, run.ErrTrap, "unreachable"},
		{"huge output", "bigoutput", "", run.KindOutputLimit, run.ErrOutputLimit, "2097152 bytes"},
		{"env with a bad offset", "badptr", `{"case":"1"}`, run.KindTrap, run.ErrTrap, "skillbox_env: not a live memory block (offset 123456789)"},
		{"read_file with an offset past memory", "badptr", `{"case":"2"}`, run.KindTrap, run.ErrTrap, "skillbox_read_file"},
		{"fetch with a bad body offset", "badptr", `{"case":"3"}`, run.KindTrap, run.ErrTrap, "skillbox_fetch: not a live memory block (offset 7)"},
		{"log with a bad offset", "badptr", `{"case":"4"}`, run.KindTrap, run.ErrTrap, "skillbox_log"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := rt.Run(context.Background(), run.Request{Skill: tc.skill, Args: []byte(tc.args), Who: testAdmin})
			if err == nil {
				t.Fatalf("run succeeded: %s", res.Result)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("error %v is not %v", err, tc.sentinel)
			}
			if res.Success || res.Error == nil || res.Error.Kind != tc.kind {
				t.Fatalf("result %+v, want kind %s", res.Error, tc.kind)
			}
			if !strings.Contains(res.Error.Message, tc.msg) {
				t.Fatalf("message %q does not contain %q", res.Error.Message, tc.msg)
			}
			// The next run, of another skill and of the same one, still works.
			ok, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin})
			if err != nil || string(ok.Result) != `{"greeting":"hi"}` {
				t.Fatalf("next run: %v %s", err, ok.Result)
			}
		})
	}
}

func TestOutputLimitIsTheManifests(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", `"limits":{"maxOutputBytes":10}`), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin})
	if !errors.Is(err, run.ErrOutputLimit) || !strings.Contains(res.Error.Message, "maxOutputBytes (10)") {
		t.Fatalf("got %v", err)
	}
}

func TestPolicyCapsTheManifestsLimits(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "loop", simple("loop", `"limits":{"timeoutMs":60000}`), "loop")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Limits: spec.Limits{TimeoutMs: 150}}})
	s, _ := rt.Skill("loop")
	if s.Grant().Limits.TimeoutMs != 150 {
		t.Fatalf("granted timeout %d", s.Grant().Limits.TimeoutMs)
	}
	if len(s.Grant().Refused) != 1 || !strings.Contains(s.Grant().Refused[0], "limits.timeoutMs: 60000 asked, the policy caps it at 150") {
		t.Fatalf("refused %q", s.Grant().Refused)
	}
	res, err := rt.Run(context.Background(), run.Request{Skill: "loop", Who: testAdmin})
	if !errors.Is(err, run.ErrTimeout) || !strings.Contains(res.Error.Message, "150ms") {
		t.Fatalf("got %v", err)
	}
}

func TestCallerCancellationAndDeadline(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "loop", simple("loop", ""), "loop")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})

	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	go func() { <-started; cancel() }()
	_, err := rt.Run(ctx, run.Request{Skill: "loop", OnEvent: func(e run.Event) {
		if e.Type == "status" && e.Status == "running" {
			close(started)
		}
	}, Who: testAdmin})
	if !errors.Is(err, run.ErrCanceled) {
		t.Fatalf("canceled run: %v", err)
	}

	ctx, cancel2 := context.WithTimeout(context.Background(), 100_000_000) // 100ms
	defer cancel2()
	_, err = rt.Run(ctx, run.Request{Skill: "loop", Who: testAdmin})
	if !errors.Is(err, run.ErrTimeout) {
		t.Fatalf("caller deadline: %v", err)
	}
}

func TestOversizedArgumentIsInvalidNotATrap(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "bigname", simple("bigname", ""), "bigname")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "bigname", Who: testAdmin})
	if err != nil || string(res.Result) != "3" {
		t.Fatalf("got %v %s; want status 3 (INVALID)", err, res.Result)
	}
}

func TestSleepEndsAtTheDeadline(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "sleep", simple("sleep", `"limits":{"timeoutMs":200}`), "sleep")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	start := time.Now()
	_, err := rt.Run(context.Background(), run.Request{Skill: "sleep", Who: testAdmin})
	if !errors.Is(err, run.ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	// The guest asked for an hour: returning within minutes proves the sleep was cut, not waited
	// out, on however slow a machine.
	if time.Since(start) > 5*time.Minute {
		t.Fatalf("the sleep outlived the deadline")
	}
}

func TestLogFloodIsBounded(t *testing.T) {
	dir := t.TempDir()
	// Three million log calls take seconds under -race on a busy machine: a generous timeout.
	fixture(t, dir, "logflood", simple("logflood", `"limits":{"maxLogBytes":6400,"timeoutMs":120000}`), "logflood")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Limits: spec.Limits{TimeoutMs: 120000}}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "logflood", Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logs) != 100 || res.LogsDropped != 3_000_000-100 {
		t.Fatalf("kept %d, dropped %d", len(res.Logs), res.LogsDropped)
	}
}

func TestTrapWithAFullMemoryIsATrap(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "fullmem", simple("fullmem", `"limits":{"memoryMiB":2}`), "fullmem")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	if _, err := rt.Run(context.Background(), run.Request{Skill: "fullmem", Who: testAdmin}); !errors.Is(err, run.ErrTrap) {
		t.Fatalf("got %v", err)
	}
}

func TestArgumentsLargerThanMemory(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "echo", simple("echo", `"parameters":{"type":"object"},"limits":{"memoryMiB":1}`), "echo")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	big := `{"x":"` + strings.Repeat("a", 1<<20) + `"}`
	if _, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(big), Who: testAdmin}); !errors.Is(err, run.ErrInvalidArgs) || !strings.Contains(err.Error(), "memory limit (1 MiB)") {
		t.Fatalf("got %v", err)
	}
}

// What a guest hands the host as an error (an Extism error of 12 MiB here) reaches the caller cut
// to the run's maxOutputBytes, like its output would.
func TestGuestErrorTextIsCapped(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "errset", simple("errset", `"limits":{"maxOutputBytes":2048}`), "errset")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "errset", Who: testAdmin})
	if !errors.Is(err, run.ErrSkillError) {
		t.Fatalf("run: %v", err)
	}
	if n := len(res.Error.Message); n > 2048+64 || !strings.Contains(res.Error.Message, "more bytes cut") {
		t.Errorf("error message of %d bytes (%.80q...), want at most maxOutputBytes and a note", n, res.Error.Message)
	}
	var re *run.Error
	if errors.As(err, &re) && len(re.Message) > 2048+64 {
		t.Errorf("the Go error's message is %d bytes", len(re.Message))
	}
	if rec, ok := rt.RunRecord(testAdmin, res.RunID); !ok || len(rec.Error.Message) > 2048+64 {
		t.Errorf("the record holds %d bytes of message", len(rec.Error.Message))
	}
}

func TestCapText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int64
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"0123456789abc", 10, "0123456789 … (3 more bytes cut)"},
		{"ééééé", 3, "é … (8 more bytes cut)"}, // never half a rune
	} {
		if got := capText(tc.in, tc.max); got != tc.want {
			t.Errorf("capText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// Mappings are reused between runs (runtime/internal/engine/mappings.go): a run must never see
// what an earlier one left in its memory or its kernel blocks, whichever engine ran it.
func TestRunsSeeNoResidue(t *testing.T) {
	for _, engine := range []Engine{EngineNative, EngineExtism} {
		t.Run(string(engine), func(t *testing.T) {
			dir := t.TempDir()
			fixture(t, dir, "residue", simple("residue", ""), "residue")
			rt := newRuntime(t, Config{SkillDirs: []string{dir}, Shared: newShared(t, SharedConfig{Engine: engine})})
			for i := range 20 {
				res, err := rt.Run(context.Background(), run.Request{Skill: "residue", Who: testAdmin})
				if err != nil || string(res.Result) != `"clean"` {
					t.Fatalf("run %d: %v %s", i, err, res.Result)
				}
			}
		})
	}
}
