package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// instructionSkill writes a SKILL.md-only skill named id with files (relative path → content).
func instructionSkill(t testing.TB, dir, id string, files map[string]string) string {
	t.Helper()
	sd := filepath.Join(dir, id)
	must(t, os.MkdirAll(sd, 0o755))
	must(t, os.WriteFile(filepath.Join(sd, "SKILL.md"), []byte("---\nname: "+id+"\ndescription: test skill "+id+"\n---\nRun scripts/tool.js.\n"), 0o644))
	for name, content := range files {
		p := filepath.Join(sd, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return sd
}

func programOutput(t *testing.T, res *run.Result) run.ProgramOutput {
	t.Helper()
	var out run.ProgramOutput
	must(t, json.Unmarshal(res.Result, &out))
	return out
}

func TestProgramRuns(t *testing.T) {
	dir := t.TempDir()
	instructionSkill(t, dir, "tools", map[string]string{
		"scripts/tool.js":  `import { shout } from "./lib.js"; console.log(shout(process.argv[2]), process.stdin.read()); if (process.argv[3]) process.exit(+process.argv[3]);`,
		"scripts/lib.js":   `export const shout = (s) => s.toUpperCase();`,
		"scripts/typed.ts": `const n: number = scriptArgs.length; console.error("args", n);`,
		"scripts/env.js":   `console.log(skillbox.env("TOKEN"))`,
		"scripts/run.sh":   "#!/bin/sh\necho hi\n",
		"scripts/x.rb":     "puts 1\n",
		"scripts/.hid.js":  "console.log(1)",
	})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Env: map[string]string{"TOKEN": "t0k"}}})
	ctx := context.Background()
	res, err := rt.Run(ctx, run.Request{Skill: "tools", Script: "tool.js", Argv: []string{"hey"}, Stdin: []byte("in"), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if out := programOutput(t, res); out.ExitCode != 0 || out.Stdout != "HEY in\n" || out.Stderr != "" {
		t.Fatalf("%+v", out)
	}
	res, err = rt.Run(ctx, run.Request{Skill: "tools", Script: "scripts/tool.js", Argv: []string{"x", "7"}, Who: testAdmin})
	if out := programOutput(t, res); err != nil || !res.Success || out.ExitCode != 7 {
		t.Fatalf("a non-zero exit is a run that succeeded with its code: %v %+v", err, out)
	}
	res, err = rt.Run(ctx, run.Request{Skill: "tools", Script: "typed.ts", Argv: []string{"a", "b"}, Who: testAdmin})
	if out := programOutput(t, res); err != nil || out.Stderr != "args 3\n" {
		t.Fatalf("typescript program: %v %+v", err, out)
	}
	// Without a declaration or a policy grant, a program gets nothing: no env.
	res, err = rt.Run(ctx, run.Request{Skill: "tools", Script: "env.js", Who: testAdmin})
	if out := programOutput(t, res); err != nil || out.Stdout != "null\n" {
		t.Fatalf("env without a grant: %v %+v", err, out)
	}
	tests := []struct {
		script string
		kind   run.ErrorKind
		msg    string
	}{
		{"run.sh", run.KindInvalidArgs, "shell script, and the sandbox has no shell"},
		{"x.rb", run.KindInvalidArgs, `not ".rb" files`},
		{"nope.py", run.KindNotFound, "no program scripts/nope.py (it has scripts/env.js, scripts/lib.js, scripts/tool.js, scripts/typed.ts)"},
		{"../SKILL.md", run.KindNotFound, "not a program"},
		{"scripts/../SKILL.md", run.KindNotFound, "not a program"},
		{".hid.js", run.KindNotFound, "not a program"},
		{"/etc/passwd", run.KindNotFound, "not a program"},
	}
	for _, tt := range tests {
		_, err := rt.Run(ctx, run.Request{Skill: "tools", Script: tt.script, Who: testAdmin})
		var re *run.Error
		if !errors.As(err, &re) || re.Kind != tt.kind || !strings.Contains(re.Message, tt.msg) {
			t.Errorf("%s: got %v, want %s with %q", tt.script, err, tt.kind, tt.msg)
		}
	}
	if _, err := rt.Run(ctx, run.Request{Skill: "tools", Who: testAdmin}); !errors.Is(err, run.ErrNotExecutable) {
		t.Fatalf("execute of an instruction skill: %v", err)
	}
	// A NUL byte cannot be in a command line: the caller's mistake, said before anything runs.
	_, err = rt.Run(ctx, run.Request{Skill: "tools", Script: "tool.js", Argv: []string{"a", "b\x00c"}, Who: testAdmin})
	if re := (*run.Error)(nil); !errors.As(err, &re) || re.Kind != run.KindInvalidArgs || !strings.Contains(re.Message, "argument 2") {
		t.Errorf("a NUL in argv: %v, want invalid_args naming argument 2", err)
	}
}

// What a skill's programs may do comes from scripts/skillbox.json, or the policy by skill id
// (policy TestScriptsPolicyIsBySkillID), within the policy's ceilings.
func TestProgramGrants(t *testing.T) {
	dir := t.TempDir()
	env := `console.log(skillbox.env("TOKEN"), skillbox.env("OTHER"))`
	instructionSkill(t, dir, "declares", map[string]string{"scripts/env.js": env,
		"scripts/skillbox.json": `{"permissions": {"env": ["TOKEN"]}, "limits": {"timeoutMs": 25000}}`})
	instructionSkill(t, dir, "granted", map[string]string{"scripts/env.js": env})
	instructionSkill(t, dir, "broken", map[string]string{"scripts/env.js": env, "scripts/skillbox.json": `{"permissions": {"env": ["1BAD"]}, "extra": 1}`})
	p := &policy.Policy{Env: map[string]string{"TOKEN": "t0k", "OTHER": "o"}, Scripts: map[string]spec.Permissions{"granted": {Env: []string{"OTHER"}}}}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: p})
	ctx := context.Background()
	for id, want := range map[string]string{"declares": "t0k null\n", "granted": "null o\n"} {
		res, err := rt.Run(ctx, run.Request{Skill: id, Script: "env.js", Who: testAdmin})
		if out := programOutput(t, res); err != nil || out.Stdout != want {
			t.Errorf("%s: %v %+v, want %q", id, err, out, want)
		}
	}
	s, _ := rt.Skill("declares")
	if g := s.ProgramGrant(); g.Limits.TimeoutMs != 25000 || len(g.Env) != 1 {
		t.Fatalf("program grant %+v", g)
	}
	_, err := rt.Run(ctx, run.Request{Skill: "broken", Script: "env.js", Who: testAdmin})
	if !errors.Is(err, run.ErrNotFound) || !strings.Contains(err.Error(), "broken/scripts/skillbox.json: permissions.env[0]") || strings.Contains(err.Error(), dir) {
		t.Fatalf("a broken scripts/skillbox.json: %v", err)
	}
	s, _ = rt.Skill("broken")
	if s.Status() != catalog.StatusActive || len(s.Warnings()) < 2 {
		t.Fatalf("the instructions still load, with warnings: %v %v", s.Status(), s.Warnings())
	}
}

// A symlink never leads a program out of its skill.
func TestProgramSymlinkOut(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.js")
	must(t, os.WriteFile(outside, []byte(`console.log("escaped")`), 0o644))
	sd := instructionSkill(t, dir, "links", map[string]string{"scripts/ok.js": `console.log(1)`})
	must(t, os.Symlink(outside, filepath.Join(sd, "scripts", "link.js")))
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	_, err := rt.Run(context.Background(), run.Request{Skill: "links", Script: "link.js", Who: testAdmin})
	if !errors.Is(err, run.ErrNotFound) || !strings.Contains(err.Error(), "scripts/link.js") || strings.Contains(err.Error(), outside) {
		t.Fatalf("a symlink out of the skill: %v", err)
	}
}

// A program may live anywhere in its skill (core/, examples/, templates/), named by its path; a
// bare name is a file of scripts/; a path out of the skill, absolute, or through a hidden
// directory is no program.
func TestAProgramOutsideScriptsIsNamedByItsPath(t *testing.T) {
	dir := t.TempDir()
	instructionSkill(t, dir, "tools", map[string]string{
		"core/build.py":     "import sys\nprint('built', *sys.argv[1:])\n",
		"examples/demo.js":  "console.log('demo')\n",
		".hidden/secret.py": "print('no')\n",
		"build.py":          "print('top')\n",
		// Named from scripts/ as the skill's SKILL.md names it from the skill's top: the file at
		// the top wins, as a path means it first.
		"scripts/office/unpack.py": "print('unpacked')\n",
		"scripts/core/build.py":    "print('not me')\n",
	})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	for script, want := range map[string]string{"core/build.py": "built a\n", "examples/demo.js": "demo\n", "./build.py": "",
		"office/unpack.py": "unpacked\n", "scripts/office/unpack.py": "unpacked\n"} {
		res, err := rt.Run(ctx, run.Request{Skill: "tools", Script: script, Argv: []string{"a"}, Who: testAdmin})
		if script == "./build.py" {
			if !errors.Is(err, run.ErrNotFound) {
				t.Errorf("%s: %v, want not_found (not a clean path)", script, err)
			}
			continue
		}
		var out run.ProgramOutput
		if err != nil || json.Unmarshal(res.Result, &out) != nil || out.Stdout != want {
			t.Errorf("%s: %s, %v", script, res.Result, err)
		}
	}
	for _, script := range []string{"build.py", "../tools/core/build.py", "/core/build.py", ".hidden/secret.py", "core/../.hidden/secret.py", "office/../../x.py", "office/nope.py"} {
		if _, err := rt.Run(ctx, run.Request{Skill: "tools", Script: script, Who: testAdmin}); !errors.Is(err, run.ErrNotFound) {
			t.Errorf("%s: %v, want not_found", script, err)
		}
	}
}

// A program of an instruction skill (which has no grant of its own, only its programs') whose
// run cannot fit the memory budget is refused as memory_limit, naming the charge: the refusal
// once read the skill's grant, and crashed the host.
func TestProgramOverTheBudget(t *testing.T) {
	dir := t.TempDir()
	instructionSkill(t, dir, "tools", map[string]string{"scripts/t.py": "print(1)\n"})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Shared: newShared(t, SharedConfig{Admission: Admission{MemoryBudget: 64 << 20}})})
	_, err := rt.Run(context.Background(), run.Request{Skill: "tools", Script: "t.py", Who: testAdmin})
	var re *run.Error
	if !errors.As(err, &re) || re.Kind != run.KindMemoryLimit || !strings.Contains(re.Message, "larger than the runtime's whole memory budget (64 MiB); lower its memoryMiB or raise the budget") {
		t.Fatalf("got %v", err)
	}
}
