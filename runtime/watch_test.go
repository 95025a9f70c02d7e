package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// watching starts rt.Watch and returns once it has chosen how to watch (and reloaded once), with
// the mode it chose. The watch ends with the test.
func watching(t *testing.T, rt *Runtime) int32 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rt.Watch(ctx, 200*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	var mode int32
	eventually(t, "Watch to start", func() bool { mode = rt.watchMode.Load(); return mode != watchNone })
	return mode
}

// eventually polls cond until it holds, failing the test if it never does: what it waits for
// happens in the background (a watcher reacting, a pool refilling, a run reaching the queue).
// The bound is for a thing that never happens, not a measure of how fast it does: two minutes,
// which no loaded machine nears.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 2 minutes for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// versionOf is the version of skill id in rt, or "" when there is none.
func versionOf(rt *Runtime, id string) string {
	s, err := rt.Skill(id)
	if err != nil {
		return ""
	}
	return s.Version()
}

// With notifications, Watch picks up a new skill, a changed manifest, a new resource directory's
// file, and a removed skill.
func TestWatchNotifies(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "old", simple("old", `"version":"1"`), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	if mode := watching(t, rt); mode != watchNotifying {
		t.Skipf("no filesystem notifications here (mode %d): the polling test covers Watch", mode)
	}
	fixture(t, dir, "late", simple("late", `"version":"1"`), "hello")
	eventually(t, "the new skill", func() bool { return versionOf(rt, "late") == "1" })

	must(t, os.WriteFile(filepath.Join(dir, "old", "skill.json"), []byte(simple("old", `"version":"2"`)), 0o644))
	eventually(t, "the changed manifest", func() bool { return versionOf(rt, "old") == "2" })

	// A directory made after the watch started is watched too: a file in it changes the digest.
	s, _ := rt.Skill("late")
	before := s.Digest()
	must(t, os.MkdirAll(filepath.Join(dir, "late", "resources"), 0o755))
	eventually(t, "the reload after mkdir", func() bool { s2, _ := rt.Skill("late"); return s2 != s })
	s, _ = rt.Skill("late")
	must(t, os.WriteFile(filepath.Join(dir, "late", "resources", "notes.md"), []byte("n"), 0o644))
	eventually(t, "the new resource", func() bool { s2, _ := rt.Skill("late"); return s2 != s && s2.Digest() != before })

	must(t, os.RemoveAll(filepath.Join(dir, "old")))
	eventually(t, "the removal", func() bool { return versionOf(rt, "old") == "" })
}

// Where notifications cannot be had — here, more directories than Watch may watch — it polls,
// and picks up changes all the same.
func TestWatchFallsBackToPolling(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "old", simple("old", `"version":"1"`), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	rt.watchLimit = 1 // the skills directory and one skill: two
	if mode := watching(t, rt); mode != watchPolling {
		t.Fatalf("mode %d, want polling", mode)
	}
	fixture(t, dir, "late", simple("late", `"version":"1"`), "hello")
	eventually(t, "the new skill", func() bool { return versionOf(rt, "late") == "1" })
	must(t, os.WriteFile(filepath.Join(dir, "old", "skill.json"), []byte(simple("old", `"version":"22"`)), 0o644))
	eventually(t, "the changed manifest", func() bool { return versionOf(rt, "old") == "22" })
}

// A skills directory that does not exist yet cannot be watched: Watch polls, and sees it appear.
func TestWatchPollsForAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	if mode := watching(t, rt); mode != watchPolling {
		t.Fatalf("mode %d, want polling", mode)
	}
	fixture(t, dir, "late", simple("late", `"version":"1"`), "hello")
	eventually(t, "the new skill", func() bool { return versionOf(rt, "late") == "1" })
}

// A skill rewritten again and again while it serves (each file replaced by an atomic rename:
// its code, its manifest) never fails a run, watched or not: a run serves the version loaded,
// or, when that changed under it, reloads and serves the one on disk. Every run answers one of
// the versions written, and the last is served once the churn stops.
func TestChurnNeverFailsARun(t *testing.T) {
	dir := t.TempDir()
	sd := scriptFixture(t, dir, "churn", simple("churn", `"version":"0.0.0"`), map[string]string{"execute.js": `export function execute() { return 0; }`})
	wasmDir := fixture(t, dir, "mod", simple("mod", `"version":"0.0.0","parameters":{"type":"object"}`), "hello")
	hello, err := os.ReadFile(filepath.Join(wasmDir, "execute.wasm"))
	must(t, err)
	echo, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	must(t, err)
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rt.Watch(ctx, 0)
	replace := func(path string, data []byte) {
		tmp := path + ".tmp"
		must(t, os.WriteFile(tmp, data, 0o644))
		must(t, os.Rename(tmp, path))
	}
	const rewrites = 30
	var done atomic.Bool
	var runs, failures atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !done.Load() {
				for _, id := range []string{"churn", "mod"} {
					res, err := rt.Run(context.Background(), run.Request{Skill: id, Args: []byte(`{}`), Who: testAdmin})
					runs.Add(1)
					if err != nil || !res.Success {
						failures.Add(1)
						firstFailure.CompareAndSwap(nil, fmt.Sprintf("%s: %v", id, err))
					}
				}
			}
		})
	}
	for i := 1; i <= rewrites; i++ {
		replace(filepath.Join(sd, "execute.js"), fmt.Appendf(nil, "export function execute() { return %d; }", i))
		replace(filepath.Join(sd, "skill.json"), []byte(simple("churn", fmt.Sprintf(`"version":"0.0.%d"`, i))))
		module := hello
		if i%2 == 1 {
			module = echo
		}
		replace(filepath.Join(wasmDir, "execute.wasm"), module)
		replace(filepath.Join(wasmDir, "skill.json"), []byte(simple("mod", fmt.Sprintf(`"version":"0.0.%d","parameters":{"type":"object"}`, i))))
		time.Sleep(20 * time.Millisecond) // pacing, not a deadline: runs go on between rewrites
	}
	done.Store(true)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d runs failed under churn; first: %v", n, runs.Load(), firstFailure.Load())
	}
	must(t, rt.Reload(context.Background()))
	if res, err := rt.Run(context.Background(), run.Request{Skill: "churn", Who: testAdmin}); err != nil || string(res.Result) != fmt.Sprint(rewrites) {
		t.Fatalf("after the churn: %v %+v", err, res)
	}
	t.Logf("%d runs under %d rewrites", runs.Load(), rewrites)
}

// A new version found broken on a reload is logged, and the last good one goes on serving
// until a sound one comes; a new policy keeps no old version serving under its old grant.
func TestBrokenNewVersionKeepsTheOldServing(t *testing.T) {
	dir := t.TempDir()
	sd := scriptFixture(t, dir, "edit", simple("edit", ""), map[string]string{"execute.js": `export function execute() { return 1; }`})
	var logs strings.Builder
	lw := &syncWriter{w: &logs}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Logger: slog.New(slog.NewTextHandler(lw, nil))})
	runIt := func() (string, error) {
		res, err := rt.Run(context.Background(), run.Request{Skill: "edit", Who: testAdmin})
		if err != nil {
			return "", err
		}
		return string(res.Result), nil
	}
	if got, err := runIt(); err != nil || got != "1" {
		t.Fatalf("v1: %v %s", err, got)
	}
	for _, broken := range []struct{ file, data string }{
		{"execute.js", `export function execute( { return 2; }`}, // a syntax error: the check fails
		{"skill.json", `{"id":"edit",`},                          // the manifest does not parse
	} {
		good, err := os.ReadFile(filepath.Join(sd, broken.file))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(sd, broken.file), []byte(broken.data), 0o644))
		must(t, rt.Reload(context.Background()))
		if got, err := runIt(); err != nil || got != "1" {
			t.Fatalf("%s broken: %v %s, want the last good version's 1", broken.file, err, got)
		}
		must(t, os.WriteFile(filepath.Join(sd, broken.file), good, 0o644))
		must(t, rt.Reload(context.Background()))
	}
	lw.mu.Lock()
	logged := logs.String()
	lw.mu.Unlock()
	if !strings.Contains(logged, "the version before it serves") {
		t.Errorf("the fallback was not logged:\n%s", logged)
	}
	must(t, os.WriteFile(filepath.Join(sd, "execute.js"), []byte(`export function execute() { return 3; }`), 0o644))
	must(t, rt.Reload(context.Background()))
	if got, err := runIt(); err != nil || got != "3" {
		t.Fatalf("v3: %v %s", err, got)
	}
	// Under a new policy, a broken version does not fall back.
	must(t, os.WriteFile(filepath.Join(sd, "execute.js"), []byte(`export function execute( {`), 0o644))
	must(t, rt.SetPolicy(context.Background(), &policy.Policy{Network: []string{"example.com"}}))
	if _, err := runIt(); !errors.Is(err, run.ErrBroken) {
		t.Fatalf("broken under a new policy: %v, want broken", err)
	}
}
