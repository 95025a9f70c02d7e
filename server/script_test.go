package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

// POST /v1/skills/{id}/scripts/{script}/runs runs a program of a skill's scripts/ directory,
// an instruction skill's too, with its command line and stdin; refusals are the documented ones.
func TestScriptRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir+"/tools", map[string]string{
		"SKILL.md":        "---\nname: tools\ndescription: Tools.\n---\nRun scripts/tool.js.\n",
		"scripts/tool.js": `console.log(process.argv.slice(2).join("|")); process.stdout.write(process.stdin.read()); process.exit(process.argv.length - 2)`,
		"scripts/go.sh":   "echo hi\n",
	})
	env := newEnv(t, Options{}, dir)
	r := post(t, env.ts.URL+"/v1/skills/tools/scripts/tool.js/runs", `{"args":["a","b"],"stdin":"in"}`)
	if r.status != 200 {
		t.Fatal(r)
	}
	res := runResult(t, r)
	var out run.ProgramOutput
	if err := json.Unmarshal(res.Result, &out); err != nil || !res.Success || out.ExitCode != 2 || out.Stdout != "a|b\nin" {
		t.Fatalf("%s (%v)", r, err)
	}
	if r := post(t, env.ts.URL+"/v1/skills/tools/scripts/tool.js/runs", ``); r.status != 200 {
		t.Fatalf("no body: %s", r)
	}
	e := wantError(t, post(t, env.ts.URL+"/v1/skills/tools/scripts/nope.py/runs", `{}`), 404, "not_found")
	if !strings.Contains(e.Error.Message, "it has scripts/tool.js") {
		t.Errorf("missing program: %s", e.Error.Message)
	}
	e = wantError(t, post(t, env.ts.URL+"/v1/skills/tools/scripts/go.sh/runs", `{}`), 422, "invalid_args")
	if !strings.Contains(e.Error.Message, "no shell") {
		t.Errorf("shell script: %s", e.Error.Message)
	}
	wantError(t, post(t, env.ts.URL+"/v1/skills/tools/scripts/tool.js/runs", `{"args":"a"}`), 400, "bad_request")
	wantError(t, post(t, env.ts.URL+"/v1/skills/ghost/scripts/tool.js/runs", `{}`), 404, "not_found")
	// No program named is no run of the skill's execute either.
	e = wantError(t, post(t, env.ts.URL+"/v1/skills/tools/scripts//runs", `{}`), 400, "bad_path")
	if !strings.Contains(e.Error.Message, "name the program") {
		t.Errorf("no program: %s", e.Error.Message)
	}
}

// A program outside scripts/ is named by its path in the skill, its slashes escaped in the URL.
func TestScriptRunsReachAProgramOutsideScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir+"/tools", map[string]string{
		"SKILL.md":      "---\nname: tools\ndescription: Tools.\n---\nRun core/build.py.\n",
		"core/build.py": "import sys\nprint('built', *sys.argv[1:])\n",
	})
	env := newEnv(t, Options{}, dir)
	r := post(t, env.ts.URL+"/v1/skills/tools/scripts/core%2Fbuild.py/runs", `{"args":["x"]}`)
	var out run.ProgramOutput
	if res := runResult(t, r); r.status != 200 || json.Unmarshal(res.Result, &out) != nil || out.Stdout != "built x\n" {
		t.Fatalf("%s", r)
	}
	wantError(t, post(t, env.ts.URL+"/v1/skills/tools/scripts/..%2Fx.py/runs", `{}`), 404, "not_found")
}

// An agent built on open-skills reads a tool's skill_version_id from /.well-known/skills.json and
// posts it to /v1/runs: that names the skill and pins the version the manifest advertised.
func TestARunByTheWellKnownSkillVersionID(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{}, "../skills")
	var m struct {
		Tools []struct {
			Name           string `json:"name"`
			SkillVersionID string `json:"skill_version_id"`
		}
	}
	get(t, env.ts.URL+"/.well-known/skills.json").decode(t, &m)
	id := ""
	for _, tool := range m.Tools {
		if tool.Name == "skill_word_count" {
			id = tool.SkillVersionID
		}
	}
	s, err := env.rt.Skill("word-count")
	if err != nil || id != "word-count@"+s.Digest() {
		t.Fatalf("skill_version_id %q, want word-count@ and the version's digest %q (%v)", id, s.Digest(), err)
	}
	r := post(t, env.ts.URL+"/v1/runs", `{"skill_version_id":"`+id+`","input":{"text":"a b a"}}`)
	if res := runResult(t, r); r.status != 200 || !res.Success || res.Skill != "word-count" || res.Digest != s.Digest() {
		t.Fatalf("%s", r)
	}
	for body, status := range map[string]int{
		`{"skill_version_id":"word-count","input":{}}`:                           400,
		`{"skill_version_id":"` + id + `","skill":"hello"}`:                      400,
		`{"skill_version_id":"word-count@sha256:00000000","input":{"text":"a"}}`: 404,
	} {
		if r := post(t, env.ts.URL+"/v1/runs", body); r.status != status {
			t.Errorf("%s: %d, want %d (%s)", body, r.status, status, r)
		}
	}
}

// GET /v1/skills/{id} lists a skill's programs with the grant they run under, what it refused
// and why; a scripts/skillbox.json that does not parse is a problem named in the skill, never by
// its host path. A skill without programs lists none.
func TestSkillDetailPrograms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir+"/tools", map[string]string{
		"SKILL.md":              "---\nname: tools\ndescription: Tools.\n---\nRun scripts/tool.js.\n",
		"scripts/tool.js":       `console.log("hi")`,
		"scripts/skillbox.json": `{"permissions":{"network":["api.example.com"]}}`,
	})
	writeFiles(t, dir+"/broken-tools", map[string]string{
		"SKILL.md":              "---\nname: broken-tools\ndescription: Tools.\n---\nRun scripts/tool.py.\n",
		"scripts/tool.py":       `print("hi")`,
		"scripts/skillbox.json": `{"permissions":{"netwrok":[]}}`,
	})
	writeFiles(t, dir+"/plain", map[string]string{"SKILL.md": "---\nname: plain\ndescription: Plain.\n---\nNothing to run.\n"})
	env := newEnv(t, Options{}, dir)
	type detail struct {
		Programs        []string `json:"programs"`
		ProgramsGranted *struct {
			Network []string `json:"network"`
			Refused []string `json:"refused"`
		} `json:"programs_granted"`
		ProgramProblems []string `json:"programs_problems"`
	}
	read := func(id string) (detail, string) {
		t.Helper()
		r := get(t, env.ts.URL+"/v1/skills/"+id)
		if r.status != 200 {
			t.Fatalf("GET /v1/skills/%s: %s", id, r)
		}
		var d detail
		r.decode(t, &d)
		return d, string(r.body)
	}
	d, _ := read("tools")
	if len(d.Programs) != 1 || d.Programs[0] != "scripts/tool.js" || d.ProgramsGranted == nil || len(d.ProgramsGranted.Network) != 0 ||
		len(d.ProgramsGranted.Refused) != 1 || !strings.Contains(d.ProgramsGranted.Refused[0], "network api.example.com: the policy's network list does not allow it") {
		t.Errorf("tools: %+v %+v", d, d.ProgramsGranted)
	}
	d, body := read("broken-tools")
	if len(d.ProgramProblems) == 0 || !strings.Contains(strings.Join(d.ProgramProblems, ";"), "netwrok") || strings.Contains(body, dir) {
		t.Errorf("broken-tools: %s", body)
	}
	if d, body := read("plain"); d.Programs == nil || len(d.Programs) != 0 || d.ProgramsGranted != nil || d.ProgramProblems != nil {
		t.Errorf("plain: %s", body)
	}
}
