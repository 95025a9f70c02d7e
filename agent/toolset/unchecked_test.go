package toolset

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/search"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// An unchecked skill (its module not read yet) is offered like an active one — listed, a tool,
// found by search — and runnable: its run checks it first. Once a check finds its module
// corrupt it is broken, and offered no more.
func TestUncheckedSkillsAreOffered(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "echo", map[string]string{"skill.json": `{"id":"echo","name":"Echo","description":"Echoes its arguments","parameters":{"type":"object"}}`}, true)
	fixture(t, dir, "corrupt", map[string]string{"skill.json": `{"id":"corrupt","name":"Corrupt","description":"Echoes nothing"}`,
		"execute.wasm": "\x00asm\x01\x00\x00\x00\x01\xff"}, false)
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, NoBackgroundCheck: true, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	for _, s := range rt.Skills() {
		if s.Status() != catalog.StatusUnchecked {
			t.Fatalf("%s: %s, want unchecked", s.ID(), s.Status())
		}
	}
	tools := func() []string {
		var names []string
		for _, tool := range tooldef.MCP(rt) {
			names = append(names, tool.Name)
		}
		return names
	}
	if got := tools(); !slices.Equal(got, []string{"skill_corrupt", "skill_echo"}) {
		t.Errorf("tools %v, want both", got)
	}
	if got := ListSkills(rt); len(got) != 2 {
		t.Errorf("listed %d skills, want 2", len(got))
	}
	if hits := search.Search(rt, "echoes", 10); len(hits) != 2 {
		t.Errorf("search found %d, want 2", len(hits))
	}
	res, err := Call(context.Background(), rt, "skill_echo", []byte(`{"a":1}`))
	if err != nil || string(res.Result) != `{"a":1}` {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if _, err := Call(context.Background(), rt, "skill_corrupt", nil); !errors.Is(err, run.ErrBroken) {
		t.Errorf("corrupt: %v", err)
	}
	if got := tools(); !slices.Equal(got, []string{"skill_echo"}) {
		t.Errorf("tools after the corrupt one was found broken: %v", got)
	}
}
