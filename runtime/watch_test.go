package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
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
