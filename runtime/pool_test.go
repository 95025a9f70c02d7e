package runtime

import (
	"context"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

// With WarmInstances, a slow-to-start module's runs take instances made ahead: the results are
// those of fresh instances, no instance serves two runs, and the pool's memory is given back when
// the engine closes.
func TestWarmPool(t *testing.T) {
	sh := newShared(t, SharedConfig{WarmInstances: 2})
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}, Shared: sh})
	ctx := context.Background()
	first, err := rt.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{"name":"Ada"}`), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pool to fill", func() bool { return rt.Stats().WarmMade >= 2 })
	for i := range 6 {
		res, err := rt.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{"name":"Ada"}`), Who: testAdmin})
		if err != nil || string(res.Result) != string(first.Result) {
			t.Fatalf("run %d: %v %s; want %s", i, err, res.Result, first.Result)
		}
		if len(res.Logs) != len(first.Logs) {
			t.Fatalf("run %d logged %v; a fresh instance logged %v", i, res.Logs, first.Logs)
		}
		eventually(t, "the pool to refill", func() bool { st := rt.Stats(); return st.WarmMade-st.WarmHits >= 2 })
	}
	st := rt.Stats()
	if st.WarmHits < 6 || st.WarmMade < st.WarmHits+2 {
		t.Fatalf("hits %d made %d: every run after the first should take a made instance, each once", st.WarmHits, st.WarmMade)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	must(t, sh.Close(ctx))
	if used := sh.Stats().MemoryInUse; used != 0 {
		t.Fatalf("after Close the budget still holds %d bytes", used)
	}
}

// A module that starts fast gets no pool.
func TestWarmPoolOnlyForSlowModules(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Shared: newShared(t, SharedConfig{WarmInstances: 2})})
	for range 5 {
		if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin}); err != nil {
			t.Fatal(err)
		}
	}
	if st := rt.Stats(); st.WarmMade != 0 {
		t.Fatalf("a trivial module got %d warm instances", st.WarmMade)
	}
}
