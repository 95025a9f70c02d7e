package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// TestInit: init makes a skills directory and a starter policy that loads and grants nothing,
// and never overwrites a policy that is there.
func TestInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := cli(t, "", "init", dir)
	expect{code: exitOK, stdout: []string{"created " + filepath.Join(dir, "skills"), "created " + filepath.Join(dir, "policy.yaml"),
		"created " + filepath.Join(dir, ".gitignore") + " (.skillbox/)", "skillbox new hello"}}.verify(t, r)
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); !strings.Contains(string(b), "\n.skillbox/\n") {
		t.Errorf(".gitignore does not ignore the project's store: %q", b)
	}
	if st, err := os.Stat(filepath.Join(dir, "skills")); err != nil || !st.IsDir() {
		t.Fatalf("skills/ = %v, %v", st, err)
	}
	pol := filepath.Join(dir, "policy.yaml")
	p, err := policy.Load(pol)
	if err != nil {
		t.Fatalf("the starter policy does not load: %v", err)
	}
	if len(p.Network) != 0 || len(p.Files) != 0 || len(p.Env) != 0 || len(p.Secrets) != 0 || len(p.AllowNetworks) != 0 ||
		p.AgentSkills.Enabled || p.Limits != (spec.Limits{}) {
		t.Errorf("the starter policy grants something: %+v", p)
	}
	// Each field is explained, with an example, in the file itself.
	body, _ := os.ReadFile(pol)
	for _, field := range []string{"network:", "allowNetworks:", "env:", "secrets:", "files:", "limits:", "scripts:", "agentSkills:", "bundles:", "runs:"} {
		if !strings.Contains(string(body), "\n"+field) || !strings.Contains(string(body), "# Example") {
			t.Errorf("the starter policy has no commented %s", field)
		}
	}
	// A second init keeps the operator's edits.
	writeFile(t, pol, "network: [example.com]\n")
	r = cli(t, "", "init", dir, "--json")
	expect{code: exitOK, stderr: []string{"policy.yaml exists: left as it is"}}.verify(t, r)
	var out struct{ Created []string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Created) != 0 {
		t.Errorf("second init created %v (%v)\n%s", out.Created, err, r)
	}
	if b, _ := os.ReadFile(pol); string(b) != "network: [example.com]\n" {
		t.Errorf("init overwrote the policy: %q", b)
	}
	writeFile(t, filepath.Join(dir, "file"), "")
	expect{code: exitFailed, stderr: []string{"file exists and is not a directory"}}.verify(t, cli(t, "", "init", "--skills", filepath.Join(dir, "file"), dir))
	expect{code: exitUsage, stderr: []string{"init takes at most one directory"}}.verify(t, cli(t, "", "init", dir, dir))
}

// TestInitUmask: what init makes follows the umask, as a mkdir would. Not parallel: the umask is
// the process's.
func TestInitUmask(t *testing.T) {
	old := syscall.Umask(0o002) // group-writable: a fixed 0755 or 0644 would not pass
	defer syscall.Umask(old)
	dir := t.TempDir()
	expect{code: exitOK}.verify(t, cli(t, "", "init", dir))
	for name, want := range map[string]os.FileMode{"skills": 0o775 | os.ModeDir, "policy.yaml": 0o664} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", name, st.Mode(), err, want)
		}
	}
}

// TestTools: skillbox tools prints the list GET /v1/tools returns, in each vendor's shape.
func TestTools(t *testing.T) {
	t.Parallel()
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{bundled}, NoBackgroundCheck: true, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	for _, tc := range []struct{ format, offer, key string }{
		{"openai", "all", "function"}, {"anthropic", "all", "input_schema"}, {"mcp", "skills", "inputSchema"}, {"ANTHROPIC", "disclosure", "input_schema"},
	} {
		t.Run(tc.format+"/"+tc.offer, func(t *testing.T) {
			r := cli(t, "", "tools", "--skills", bundled, "--format", tc.format, "--tools", tc.offer)
			expect{code: exitOK, stdout: []string{`"` + tc.key + `"`}}.verify(t, r)
			f, _ := toolset.ParseFormat(tc.format)
			o, _ := toolset.ParseOffer(tc.offer)
			want, _ := json.Marshal(o.List(rt, f).Tools)
			var got, wantV any
			if f == "mcp" {
				var m struct{ Tools any }
				_ = json.Unmarshal([]byte(r.stdout), &m)
				got = m.Tools
			} else {
				_ = json.Unmarshal([]byte(r.stdout), &got)
			}
			_ = json.Unmarshal(want, &wantV)
			if !reflect.DeepEqual(got, wantV) {
				t.Errorf("skillbox tools differs from the offer's list\n got: %s\nwant: %s", r.stdout, want)
			}
			if !strings.Contains(r.stdout, "word_count") && tc.offer != "disclosure" {
				t.Errorf("no word-count tool:\n%s", r.stdout)
			}
		})
	}
	expect{code: exitUsage, emptyStdout: true, stderr: []string{`--format "gemini": use openai, anthropic or mcp`}}.verify(t, cli(t, "", "tools", "--format", "gemini"))
	expect{code: exitUsage, emptyStdout: true, stderr: []string{`tools "some": use all, skills or disclosure`}}.verify(t, cli(t, "", "tools", "--tools", "some"))
	// --tool-names devai: the list a Devai backend gets (no authoring here: the policy is off).
	r := cli(t, "", "tools", "--skills", bundled, "--tool-names", "devai")
	expect{code: exitOK, stdout: []string{`"skill_list"`, `"skill_reload"`, `"skill_word_count"`}}.verify(t, r)
	if strings.Contains(r.stdout, `"skill_create"`) {
		t.Errorf("--tool-names devai offers skill_create where agents may not write skills:\n%s", r.stdout)
	}
	expect{code: exitUsage, emptyStdout: true, stderr: []string{`tool names "devia": use skillbox or devai`}}.verify(t, cli(t, "", "tools", "--tool-names", "devia"))
}

// TestInstructions: the SKILL.md as a model gets it, $ARGUMENTS filled in; --raw as written.
func TestInstructions(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, "review")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(skill, "SKILL.md"), "---\nname: review\ndescription: Review a change\n---\nReview $ARGUMENTS with care; then $1.\n")
	skillFixture(t, dir, "plain", manifest("plain", ""), "hello")
	abs, _ := filepath.Abs(skill)
	runCases(t, []cliCase{
		{name: "processed", when: []string{"instructions", "review", "--skills", dir, "--arguments", "pr-12 tests"},
			expect: expect{code: exitOK, stdout: []string{abs, "Review pr-12 tests with care; then tests."}, notStdout: []string{"$ARGUMENTS", "---"}}},
		{name: "raw", when: []string{"instructions", "review", "--skills", dir, "--raw"},
			expect: expect{code: exitOK, stdout: []string{"Review $ARGUMENTS with care; then $1.\n"}, notStdout: []string{abs}}},
		{name: "json", when: []string{"instructions", "review", "--skills", dir, "--json"},
			expect: expect{code: exitOK, stdout: []string{`"id": "review"`, `"description": "Review a change"`, `"content": `}}},
		{name: "bundled", when: []string{"instructions", "markdown-toc", "--skills", bundled},
			expect: expect{code: exitOK, stdout: []string{"toc.py"}}},
		{name: "no SKILL.md", when: []string{"instructions", "plain", "--skills", dir},
			expect: expect{code: exitFailed, emptyStdout: true, stderr: []string{`skill "plain" has no SKILL.md`}}},
		{name: "no id", when: []string{"instructions"},
			expect: expect{code: exitUsage, emptyStdout: true, stderr: []string{"instructions takes one skill id"}}},
	})
}

// TestCompleteSkillIDs: the shell completes a skill id from the skills directories.
func TestCompleteSkillIDs(t *testing.T) {
	runCases(t, []cliCase{
		{name: "run", when: []string{"__complete", "--skills", "$SKILLS", "run", "wo"}, expect: expect{code: exitOK, stdout: []string{"word-count\n", "hello\n", ":4\n"}}},
		{name: "second argument", when: []string{"__complete", "--skills", "$SKILLS", "show", "hello", ""}, expect: expect{code: exitOK, notStdout: []string{"word-count"}}},
		{name: "flags", when: []string{"__complete", "run", "--ar"}, expect: expect{code: exitOK, stdout: []string{"--args"}}},
	})
}
