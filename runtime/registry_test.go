package runtime

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

func TestRegistryScan(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	fixture(t, a, "hello", simple("hello", `"version":"1.0.0"`), "hello")
	fixture(t, b, "hello", simple("hello", `"version":"2.0.0"`), "hello") // loses the clash
	fixture(t, b, "echo", simple("echo", ""), "echo")
	fixture(t, a, "broken", `{"id":"broken","name":"b","descripton":"typo"}`, "")
	fixture(t, a, "mismatch", simple("other", ""), "hello")
	must(t, os.MkdirAll(filepath.Join(a, "docs-only"), 0o755))
	must(t, os.WriteFile(filepath.Join(a, "docs-only", "skill.md"), []byte("---\nname: docs-only\ndescription: d\n---\nbody"), 0o644))
	must(t, os.MkdirAll(filepath.Join(a, "not-a-skill", "src"), 0o755))
	must(t, os.MkdirAll(filepath.Join(a, ".hidden"), 0o755))
	must(t, os.Symlink(filepath.Join(b, "echo"), filepath.Join(a, "linked")))

	var logs bytes.Buffer
	rt := newRuntime(t, Config{SkillDirs: []string{a, b, filepath.Join(a, "missing")},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	settled(t, rt)
	var ids []string
	for _, s := range rt.Skills() {
		ids = append(ids, s.ID()+":"+string(s.Kind())+":"+string(s.Status()))
	}
	want := "broken:executable:error docs-only:instructions:active echo:executable:active hello:executable:active linked:executable:error mismatch:executable:error"
	if strings.Join(ids, " ") != want {
		t.Fatalf("skills\n got %s\nwant %s", strings.Join(ids, " "), want)
	}
	if h, _ := rt.Skill("hello"); h.Version() != "1.0.0" {
		t.Errorf("the first directory must win the clash, got %s", h.Version())
	}
	if !strings.Contains(logs.String(), "skill id defined twice") {
		t.Errorf("no clash warning in %s", logs.String())
	}
	broken, _ := rt.Skill("broken")
	if !errors.Is(broken.Err(), spec.ErrInvalidSkill) || !strings.Contains(broken.Err().Error(), `descripton: unknown field (did you mean "description"?)`) ||
		!strings.Contains(broken.Err().Error(), "description: is required") {
		t.Errorf("broken: %v", broken.Err())
	}
	mm, _ := rt.Skill("mismatch")
	if !strings.Contains(mm.Err().Error(), `id: "other" does not match the directory name "mismatch"`) {
		t.Errorf("mismatch: %v", mm.Err())
	}
	if _, err := rt.Run(context.Background(), run.Request{Skill: "broken", Who: testAdmin}); !errors.Is(err, run.ErrNotFound) || !strings.Contains(err.Error(), "broken") {
		t.Errorf("running a broken skill: %v", err)
	}
	if _, err := rt.Run(context.Background(), run.Request{Skill: "docs-only", Who: testAdmin}); !errors.Is(err, run.ErrNotFound) || !strings.Contains(err.Error(), "instructions only") {
		t.Errorf("running an instruction skill: %v", err)
	}
	if _, err := rt.Skill("nope"); !errors.Is(err, run.ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
}

func TestMissingModule(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "nomod", simple("nomod", ""), "")
	must(t, os.MkdirAll(filepath.Join(dir, "notwasm"), 0o755))
	fixture(t, dir, "notwasm", simple("notwasm", ""), "")
	must(t, os.WriteFile(filepath.Join(dir, "notwasm", spec.ModuleFile), []byte("#!/bin/sh\n"), 0o644))
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	settled(t, rt)
	for id, want := range map[string]string{"nomod": "execute.wasm: missing", "notwasm": "not a WebAssembly module"} {
		s, _ := rt.Skill(id)
		if s.Status() != catalog.StatusError || !strings.Contains(s.Err().Error(), want) {
			t.Errorf("%s: %v", id, s.Err())
		}
	}
}

func TestEmptyConfigHasNoSkills(t *testing.T) {
	rt := newRuntime(t, Config{})
	if len(rt.Skills()) != 0 {
		t.Fatal("skills without directories")
	}
}

// A reload swaps versions under concurrent runs; each run finishes on the version it started
// with. Versions are swapped whole, as a deploy (or Install) does: the skill's directory is a
// symlink replaced atomically. A version replaced before it is checked, or before its module is
// compiled, no longer exists on disk: its runs fail cleanly (not_found, saying it changed) rather
// than run another version's module. (A package rewritten file by file in place is seen half
// written by whatever reads it meanwhile — a scan, or now a first run — as it always was.)
func TestReloadPinsRunningVersion(t *testing.T) {
	dir, versions := t.TempDir(), t.TempDir()
	fixture(t, versions, "s", simple("s", `"version":"1"`), "hello")
	must(t, os.Rename(filepath.Join(versions, "s"), filepath.Join(versions, "v1")))
	fixture(t, versions, "s", simple("s", `"version":"2"`), "echo")
	must(t, os.Rename(filepath.Join(versions, "s"), filepath.Join(versions, "v2")))
	swap := func(v string) {
		tmp := filepath.Join(dir, ".s.next")
		must(t, os.Symlink(filepath.Join(versions, "v"+v), tmp))
		must(t, os.Rename(tmp, filepath.Join(dir, "s")))
	}
	swap("1")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				res, err := rt.Run(context.Background(), run.Request{Skill: "s", Who: testAdmin})
				if err != nil {
					if errors.Is(err, run.ErrNotFound) && (errors.Is(err, run.ErrModuleChanged) || strings.Contains(err.Error(), "changed")) {
						continue
					}
					errs <- err
					return
				}
				// Version 1 is hello (greeting), version 2 is echo (the arguments, {}).
				got := string(res.Result)
				if (res.Version == "1" && got != `{"greeting":"hi"}`) || (res.Version == "2" && got != `{}`) {
					errs <- errors.New("version " + res.Version + " gave " + got)
					return
				}
			}
		}()
	}
	for i := 0; i < 10; i++ {
		v := "2"
		if i%2 == 1 {
			v = "1"
		}
		swap(v)
		must(t, rt.Reload(context.Background()))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Once the files hold still, the last version runs.
	if res, err := rt.Run(context.Background(), run.Request{Skill: "s", Who: testAdmin}); err != nil || res.Version != "1" || string(res.Result) != `{"greeting":"hi"}` {
		t.Errorf("the last version: %v %+v", err, res)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A skill package is untrusted: a module that is a device or a FIFO must not hang or exhaust the
// scan.
func TestModuleThatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "zero", simple("zero", ""), "")
	must(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero", spec.ModuleFile)))
	fixture(t, dir, "fifo", simple("fifo", ""), "")
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo", spec.ModuleFile), 0o644))
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	settled(t, rt)
	for _, id := range []string{"zero", "fifo"} {
		s, _ := rt.Skill(id)
		if s.Status() != catalog.StatusError || !strings.Contains(s.Err().Error(), "not a regular file") {
			t.Errorf("%s: %v", id, s.Err())
		}
	}
}

// An instruction skill's SKILL.md is read at discovery (frontmatter only): a broken one is listed
// with every problem; a good one gives the skill its name and description.
func TestInstructionSkillMetadata(t *testing.T) {
	dir := t.TempDir()
	for id, body := range map[string]string{
		"good":  "---\nname: Good guide\ndescription: Explains things\n---\nBody text\n",
		"empty": "",
		"bare":  "---\nlicense: MIT\n---\nno name, no description\n",
		"void":  "---\nlicense: MIT\n---\n",
	} {
		must(t, os.MkdirAll(filepath.Join(dir, id), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, id, "SKILL.md"), []byte(body), 0o644))
	}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	good, _ := rt.Skill("good")
	if good.Status() != catalog.StatusActive || good.Name() != "Good guide" || good.Description() != "Explains things" || good.Instructions().Body != "" {
		t.Errorf("good: %+v %v", good.Instructions(), good.Err())
	}
	empty, _ := rt.Skill("empty")
	if empty.Status() != catalog.StatusError || !strings.Contains(empty.Err().Error(), "SKILL.md") {
		t.Errorf("empty: %v", empty.Err())
	}
	// No name and no description load as Claude Code loads them: named after the directory,
	// described by the first paragraph, with a warning each (see TestLoadWhatClaudeCodeLoads).
	bare, _ := rt.Skill("bare")
	if bare.Status() != catalog.StatusActive || bare.Name() != "bare" || bare.Description() != "no name, no description" || len(bare.Warnings()) != 2 {
		t.Errorf("bare: %s %q %q %v %v", bare.Status(), bare.Name(), bare.Description(), bare.Warnings(), bare.Err())
	}
	// Without a paragraph either, nothing says what the skill is for.
	void, _ := rt.Skill("void")
	if void.Status() != catalog.StatusError || !strings.Contains(void.Err().Error(), "description: is required") {
		t.Errorf("void: %v", void.Err())
	}
}
