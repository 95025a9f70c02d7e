package toolset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// run_skill_script runs a program a skill's SKILL.md names, and says plainly what it cannot run.
func TestRunSkillScript(t *testing.T) {
	rt := pdfSkill(t, map[string]string{
		"SKILL.md":           "---\nname: pdf\ndescription: Works with PDFs.\n---\nRun scripts/count.js with the file names.\n",
		"scripts/count.js":   `console.log(process.argv.length - 2, process.stdin.read())`,
		"scripts/install.sh": "apt-get install poppler\n",
	})
	ctx := context.Background()
	res, err := Call(ctx, rt, ToolRunSkillScript, []byte(`{"skill":"pdf","script":"scripts/count.js","args":["a.pdf","b.pdf"],"stdin":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out run.ProgramOutput
	if err := json.Unmarshal(res.Result, &out); err != nil || out.ExitCode != 0 || out.Stdout != "2 x\n" {
		t.Fatalf("%s %v", res.Result, err)
	}
	if got, _ := Handle(ctx, rt, ToolLoadSkill, []byte(`{"name":"pdf"}`)); !strings.Contains(got, "Programs it can run in the sandbox, with run_skill_script: scripts/count.js\n") &&
		!strings.HasSuffix(got, "with run_skill_script: scripts/count.js") {
		t.Errorf("load_skill does not name the programs: %s", got)
	}
	for args, want := range map[string]string{
		`{"skill":"pdf","script":"install.sh"}`:          "the sandbox has no shell",
		`{"skill":"pdf","script":"count.js","args":"a"}`: `argument "args": must be an array of strings`,
		`{"skill":"pdf"}`:                 `argument "script": is required`,
		`{"skill":"pdf","script":"x.py"}`: "it has scripts/count.js",
	} {
		got, _ := Handle(ctx, rt, ToolRunSkillScript, []byte(args))
		if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q", args, got, want)
		}
	}
}

// Code written for pydantic-ai-skills calls read_skill_resource(skill_name, resource_name) and
// run_skill_script(skill_name, script_name, args), its scripts named without ".py": the toolset
// takes those names and that form as they are.
func TestPydanticAISkillsCallsWorkUnchanged(t *testing.T) {
	rt := pdfSkill(t, map[string]string{
		"SKILL.md":          "---\nname: pdf\ndescription: Works with PDFs.\n---\nSee FORMS.md; run scripts/fill.py.\n",
		"FORMS.md":          "# Forms\nFill them in.\n",
		"scripts/fill.py":   "import sys\nprint('filled', *sys.argv[1:])\n",
		"scripts/merge.py":  "print('py')\n",
		"scripts/merge.js":  "console.log('js')\n",
		"scripts/notes.txt": "not a program\n",
	})
	ctx := context.Background()
	if got, _ := Handle(ctx, rt, ToolReadSkillResource, []byte(`{"skill_name":"pdf","resource_name":"FORMS.md"}`)); got != "# Forms\nFill them in.\n" {
		t.Errorf("read_skill_resource(skill_name, resource_name): %q", got)
	}
	res, err := Call(ctx, rt, ToolRunSkillScript, []byte(`{"skill_name":"pdf","script_name":"fill","args":["a.pdf"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var out run.ProgramOutput
	if err := json.Unmarshal(res.Result, &out); err != nil || out.ExitCode != 0 || out.Stdout != "filled a.pdf\n" {
		t.Fatalf("run_skill_script(skill_name, script_name, args): %s %v", res.Result, err)
	}
	for args, want := range map[string]string{
		`{"skill":"pdf","skill_name":"pdf","script":"fill"}`: `arguments "skill" and "skill_name": are one argument; give "skill" alone`,
		`{"skill_name":"pdf","script_name":"merge"}`:         "scripts/merge names several programs (scripts/merge.js, scripts/merge.py)",
		`{"skill_name":"pdf","script_name":"notes"}`:         "has no program scripts/notes (it has scripts/fill.py, scripts/merge.js, scripts/merge.py)",
		`{"skill_name":"pdf","resource_name":"FORMS.md"}`:    `argument "resource_name": is not an argument of this tool`,
	} {
		got, _ := Handle(ctx, rt, ToolRunSkillScript, []byte(args))
		if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q", args, got, want)
		}
	}
}

// pdfSkill is a runtime over one skill, pdf, made of files (slash-separated paths).
func pdfSkill(t *testing.T, files map[string]string) *runtime.Runtime {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, "pdf", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(t, runtime.SharedConfig{NoCache: true})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}
