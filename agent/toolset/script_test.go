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
	dir := t.TempDir()
	sd := filepath.Join(dir, "pdf")
	if err := os.MkdirAll(filepath.Join(sd, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"SKILL.md":           "---\nname: pdf\ndescription: Works with PDFs.\n---\nRun scripts/count.js with the file names.\n",
		"scripts/count.js":   `console.log(process.argv.length - 2, process.stdin.read())`,
		"scripts/install.sh": "apt-get install poppler\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(sd, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(t, runtime.SharedConfig{NoCache: true})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
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
