package runtime

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// TestOnReload: a reload says what it changed: a skill added, a module replaced under the same
// manifest (known by its digest), a manifest broken, a skill removed; nothing for a reload that
// changed nothing.
func TestOnReload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	fixture(t, dir, "a", simple("a", ""), "hello")
	fixture(t, dir, "b", simple("b", ""), "hello")
	var got []Reloaded
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, NoBackgroundCheck: true, OnReload: func(d Reloaded) { got = append(got, d) }})
	rt.Skills()
	last := func() Reloaded {
		t.Helper()
		if err := rt.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		return got[len(got)-1]
	}
	if d := last(); !d.Empty() || d.Count != 2 {
		t.Errorf("a reload that changed nothing: %+v", d)
	}
	fixture(t, dir, "c", simple("c", ""), "hello")
	if d := last(); !reflect.DeepEqual(d.Added, []string{"c"}) || len(d.Changed)+len(d.Removed) != 0 || d.Count != 3 {
		t.Errorf("a skill added: %+v", d)
	}
	// b's module replaced, its manifest as it was: known changed because b was checked (run).
	if _, err := rt.Run(ctx, run.Request{Skill: "b", Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b", spec.ModuleFile), other, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := last(); !reflect.DeepEqual(d.Changed, []string{"b"}) {
		t.Errorf("a module replaced: %+v", d)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "skill.json"), []byte(`{"id": "a",`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	d := last()
	if !reflect.DeepEqual(d.Changed, []string{"a"}) || !reflect.DeepEqual(d.Removed, []string{"c"}) || len(d.Broken) != 1 || d.Broken[0].ID != "a" || d.Broken[0].Reason == "" {
		t.Errorf("a manifest broken and a skill removed: %+v", d)
	}
}
