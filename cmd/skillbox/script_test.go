package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// programSkill writes an instruction skill with one program, scripts/tool.js.
func programSkill(t *testing.T, src string) string {
	t.Helper()
	skills := t.TempDir()
	dir := filepath.Join(skills, "tools")
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: tools\ndescription: Tools.\n---\nRun scripts/tool.js.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "tool.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return skills
}

// warmJS compiles the JavaScript interpreter into the shared cache, once, by running a program
// such as TestScript's with the skillbox binary: it compiles the interpreter several times faster
// than this test binary, built with -race, does in-process. The outcome does not matter here:
// the tests that run programs check theirs.
var warmJS = sync.OnceFunc(func() {
	bin, err := buildBinary()
	if err != nil {
		return
	}
	skills, err := os.MkdirTemp("", "skillbox-warm-")
	if err != nil {
		return
	}
	defer os.RemoveAll(skills)
	dir := filepath.Join(skills, "tools")
	if os.MkdirAll(filepath.Join(dir, "scripts"), 0o755) != nil ||
		os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: tools\ndescription: Tools.\n---\nRun scripts/warm.js.\n"), 0o644) != nil ||
		os.WriteFile(filepath.Join(dir, "scripts", "warm.js"), []byte(`console.log("warm")`), 0o644) != nil {
		return
	}
	cmd := exec.Command(bin, "--cache-dir", cacheDir, "--skills", skills, "script", "tools", "warm.js", "--no-store")
	cmd.Env = buildEnv
	_ = cmd.Run()
})

func TestScript(t *testing.T) {
	t.Parallel()
	warmJS()
	skills := programSkill(t, `console.log("args:", process.argv.slice(2).join("|")); console.error("note"); process.stdout.write(process.stdin.read()); process.exit(+(process.argv[2] || 0))`)
	// The program's stdout and stderr are the command's, and its exit code is the command's.
	r := cli(t, "", "--skills", skills, "script", "tools", "tool.js", "4", "b c", "--stdin", "piped")
	if r.code != 4 || r.stdout != "args: 4|b c\npiped" || !strings.HasPrefix(r.stderr, "note\n") {
		t.Fatalf("script: %s", r)
	}
	// --stdin - reads this process's stdin; -- passes flags to the program.
	r = cli(t, "from stdin", "--skills", skills, "script", "tools", "scripts/tool.js", "--stdin", "-", "--", "--flag")
	if r.code != 0 || r.stdout != "args: --flag\nfrom stdin" {
		t.Fatalf("script with --stdin -: %s", r)
	}
	r = cli(t, "", "--skills", skills, "--json", "script", "tools", "tool.js", "2")
	var out struct {
		ExitCode       int `json:"exit_code"`
		Stdout, Stderr string
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 2 || out.ExitCode != 2 || out.Stdout != "args: 2\n" || out.Stderr != "note\n" {
		t.Fatalf("--json: %s (%v)", r, err)
	}
	r = cli(t, "", "--skills", skills, "--json", "script", "tools", "go.sh")
	var refused struct {
		Error struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &refused); err != nil || r.code != exitFailed || refused.Error.Kind != "invalid_args" {
		t.Fatalf("--json of a refused program: %s (%v)", r, err)
	}
	if r := cli(t, "", "--skills", skills, "show", "tools"); r.code != 0 || !strings.Contains(r.stdout, "programs:     scripts/tool.js") ||
		!strings.Contains(r.stdout, "granted: network none; env none; secrets none; files /skill (read-only)") {
		t.Errorf("show: %s", r)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"script", "tools"}, exitUsage, "script takes a skill id and a program"},
		{[]string{"script", "tools", "install.sh"}, exitFailed, "the sandbox has no shell"},
		{[]string{"script", "tools", "nope.py"}, exitFailed, "no program scripts/nope.py (it has scripts/tool.js)"},
		{[]string{"script", "ghost", "tool.js"}, exitFailed, `skillbox: no skill "ghost" in `},
	} {
		r := cli(t, "", append([]string{"--skills", skills}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %s, want exit %d and %q", tc.args, r, tc.code, tc.want)
		}
	}
}
