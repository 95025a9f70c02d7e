package runtime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

// A check (validate, an install) compiles a skill's Python files in the sandboxed interpreter: a
// syntax error is a problem placed at file:line:col, in execute.py, in a module it imports and in
// a program, and a skill whose files compile has none.
func TestACheckPlacesAPythonSyntaxError(t *testing.T) {
	dir := t.TempDir()
	scriptFixture(t, dir, "unclosed", simple("unclosed", ""), map[string]string{
		"execute.py": "def execute(args, ctx):\n    return {'a': 1\n",
	})
	scriptFixture(t, dir, "lib", simple("lib", ""), map[string]string{
		"execute.py":    "from helper import twice\ndef execute(args, ctx):\n    return twice(2)\n",
		"lib/helper.py": "def twice(x):\nreturn 2 * x\n",
	})
	scriptFixture(t, dir, "unicode", simple("unicode", ""), map[string]string{
		"execute.py": "def execute(args, ctx):\n    return 'é' + (\n",
	})
	instructionSkill(t, dir, "program", map[string]string{"scripts/report.py": "import sys\nprint(sys.argv[1:]\n"})
	scriptFixture(t, dir, "fine", simple("fine", ""), map[string]string{
		"execute.py":        "from helper import twice\ndef execute(args, ctx):\n    return twice(2)\n",
		"lib/helper.py":     "def twice(x):\n    return 2 * x\n",
		"scripts/report.py": "import sys\nprint(sys.argv[1:])\n",
	})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	want := map[string]string{
		"unclosed": filepath.Join(dir, "unclosed", "execute.py") + ":2:12: SyntaxError: '{' was never closed",
		"lib":      filepath.Join(dir, "lib", "lib", "helper.py") + ":2:1: IndentationError: expected an indented block after function definition on line 1",
		"program":  filepath.Join(dir, "program", "scripts", "report.py") + ":2:6: SyntaxError: '(' was never closed",
		"unicode":  filepath.Join(dir, "unicode", "execute.py") + ":2:18: SyntaxError: '(' was never closed", // characters, not bytes
		"fine":     "",
	}
	checked := rt.CheckSkills(context.Background(), dir)
	if len(checked) != len(want) {
		t.Fatalf("%d skills checked, want %d", len(checked), len(want))
	}
	for _, s := range checked {
		var got []string
		if se, ok := s.Err().(*spec.SkillError); ok {
			for _, p := range se.Problems {
				got = append(got, p.Error())
			}
		}
		if w := want[s.ID()]; w == "" && len(got) > 0 || w != "" && (len(got) != 1 || got[0] != w) {
			t.Errorf("%s: problems %q, want %q", s.ID(), got, w)
		}
	}
}

// An install of a Python skill that does not compile is refused with the place of the error, and
// leaves nothing installed.
func TestAnInstallRefusesPythonThatDoesNotCompile(t *testing.T) {
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	files := map[string][]byte{
		"skill.json": []byte(simple("broken", "")),
		"execute.py": []byte("def execute(args, ctx):\n    return 1 +\n"),
	}
	_, err := rt.Install(context.Background(), "broken", files, InstallOptions{Who: testAdmin})
	if !errors.Is(err, spec.ErrInvalidSkill) || !strings.Contains(err.Error(), "execute.py:2:15: SyntaxError: invalid syntax") {
		t.Fatalf("got %v, want the syntax error at execute.py:2:15", err)
	}
	if _, err := rt.Skill("broken"); err == nil {
		t.Fatal("the skill that does not compile was installed")
	}
}

// A check compiles at most maxCheckedPython files, in the order the skill's files are listed: a
// file past them is left to the runs that import it.
func TestACheckCompilesABoundedNumberOfPythonFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range maxCheckedPython {
		files[fmt.Sprintf("scripts/a%03d.py", i)] = "x = 1\n"
	}
	files["scripts/z.py"] = "x = (\n" // the first past the bound
	instructionSkill(t, dir, "many", files)
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	checked := rt.CheckSkills(context.Background(), dir)
	if len(checked) != 1 || checked[0].Err() != nil {
		t.Fatalf("got %d skills, the first with %v; want one with no problem (z.py is past the bound)", len(checked), checked[0].Err())
	}
}

func TestCharColumn(t *testing.T) {
	src := []byte("ab\n'é' + (\n\nlast")
	for _, tc := range []struct{ line, col, want int }{
		{1, 2, 2},
		{2, 9, 8},   // after 'é', two bytes
		{2, 20, 20}, // past the line: as it was
		{3, 1, 1},
		{4, 5, 5}, // the last line, no newline after it
		{9, 3, 3}, // past the source
		{0, 3, 3},
		{2, 0, 0},
	} {
		if got := charColumn(src, tc.line, tc.col); got != tc.want {
			t.Errorf("charColumn(line %d, col %d) = %d, want %d", tc.line, tc.col, got, tc.want)
		}
	}
}
