package modules_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/internal/skilltest"
	"github.com/skillbox-dev/skillbox/agent/modules"
	"github.com/skillbox-dev/skillbox/agent/runmodule"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

// write puts files (by slash path) in the skill id of dir.
func write(t *testing.T, dir, id string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, id, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, id)
}

// imageGen is an Autobyteus skill as its documentation writes one: skill.md, and a module
// whose run.py reads {"args": ...} on stdin and prints JSON.
func imageGen(desc string) map[string]string {
	return map[string]string{
		"skill.md": "---\nname: image-generation\ndescription: " + desc + "\n---\nCall image_gen with [RUN_MODULE].\n",
		"modules/image_gen/module.json": `{"name": "image_gen", "description": "Generate images",
  "command": ["python", "run.py"], "working_dir": "modules/image_gen",
  "arguments": [{"name": "prompt", "type": "string", "description": "Scene", "required": true},
                {"name": "style", "type": "string", "description": "Art style", "required": false}]}`,
		"modules/image_gen/run.py": `import json, sys
req = json.load(sys.stdin)
a = req["args"]
if a["prompt"] == "crash":
    print("the pipeline broke", file=sys.stderr)
    sys.exit(3)
if a["prompt"] == "prose":
    print("not json")
    sys.exit(0)
print(json.dumps({"image": a["prompt"] + ".png", "style": a.get("style", "plain")}))
`,
	}
}

// A module.json reads as a program of its skill: its runner by path, its arguments as a
// manifest's parameters (required ones required, unknown ones refused).
func TestLoadReadsAModule(t *testing.T) {
	dir := write(t, t.TempDir(), "image-generation", imageGen("Makes images."))
	mods, err := modules.Load(dir)
	if err != nil || len(mods) != 1 {
		t.Fatalf("%+v %v", mods, err)
	}
	m := mods[0]
	if m.Name != "image_gen" || m.Program != "modules/image_gen/run.py" || m.Description != "Generate images" {
		t.Errorf("%+v", m)
	}
	if _, err := m.Schema().Prepare([]byte(`{"style":"x"}`)); err == nil || !strings.Contains(err.Error(), "prompt") {
		t.Errorf("a missing required argument: %v", err)
	}
	if _, err := m.Schema().Prepare([]byte(`{"prompt":"a","size":3}`)); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("an unknown argument: %v", err)
	}
	if mods, err := modules.Load(write(t, t.TempDir(), "plain", map[string]string{"SKILL.md": "x"})); err != nil || mods != nil {
		t.Errorf("a skill without modules: %+v %v", mods, err)
	}
}

// Each problem of a module.json is named by its file and field, with what to write; all of a
// skill's are said at once.
func TestLoadNamesEachProblem(t *testing.T) {
	dir := write(t, t.TempDir(), "bad", map[string]string{
		"modules/a/module.json": `{"name": "b", "command": ["bash", "run.sh"]}`,
		"modules/c/module.json": `{"name": "c", "working_dir": "../..", "arguments": [{"name": "x", "type": "text"}, {"type": "string"}], "colour": 1}`,
		"modules/d/module.json": `{"name": "d",`,
		"modules/e/notes.txt":   "not a module: no module.json",
	})
	_, err := modules.Load(dir)
	var se *spec.SkillError
	if !errors.As(err, &se) {
		t.Fatalf("%v", err)
	}
	text := err.Error()
	for _, want := range []string{
		`modules/a/module.json: name: is "b", but the module's directory is modules/a`,
		`modules/a/module.json: command: names no program`,
		`modules/c/module.json: working_dir: "../.." is not a clean relative path`,
		`modules/c/module.json: arguments.x.type`,
		`modules/c/module.json: arguments[1].name: is required`,
		`modules/c/module.json: colour`,
		`modules/d/module.json:1:`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "modules/e") {
		t.Errorf("a directory without module.json is reported:\n%s", text)
	}
}

// A [RUN_MODULE] block that names a module runs its program in the sandbox with the block's
// arguments on stdin, and answers what it printed; its arguments are checked first; a program
// that fails, or prints no JSON, is a skill_error with its stderr; a module in two skills is
// named by skill/module.
func TestRunModuleBlocksReachModules(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "image-generation", imageGen("Makes images."))
	rt := skilltest.NewRuntime(t, dir, nil)
	ctx := context.Background()
	answer := func(args string) runmodule.Result {
		t.Helper()
		rs := runmodule.Run(ctx, rt, "[RUN_MODULE]\n{\"name\": \"image_gen\", \"args\": "+args+"}\n[/RUN_MODULE]")
		if len(rs) != 1 {
			t.Fatalf("%d results", len(rs))
		}
		return rs[0]
	}
	r := answer(`{"prompt": "sleepy teapot", "style": "charcoal"}`)
	if r.Err != nil || string(r.Result.Result) != `{"image": "sleepy teapot.png", "style": "charcoal"}` || r.Result.RunID == "" {
		t.Fatalf("%+v %v", r.Result, r.Err)
	}
	if got := runmodule.FormatResult(r); !strings.Contains(got, `"name":"image_gen","success":true`) {
		t.Errorf("the answer block: %s", got)
	}
	for args, want := range map[string]string{
		`{"style": "x"}`:      "invalid_args",
		`{"prompt": "crash"}`: "exited 3: the pipeline broke",
		`{"prompt": "prose"}`: "printed no JSON value",
	} {
		r := answer(args)
		if r.Err == nil || r.Result.Success || !strings.Contains(r.Result.Error.Message+string(r.Result.Error.Kind), strings.TrimPrefix(want, "invalid_args")) ||
			(want == "invalid_args" && r.Result.Error.Kind != run.KindInvalidArgs) {
			t.Errorf("%s: %+v %v", args, r.Result.Error, r.Err)
		}
	}

	// A program that prints past the run's maxOutputBytes has no whole result.
	write(t, dir, "loud", map[string]string{
		"skill.md":                  "---\nname: loud\ndescription: Prints a lot.\n---\nx\n",
		"scripts/skillbox.json":     `{"limits": {"maxOutputBytes": 1024}}`,
		"modules/shout/module.json": `{"name": "shout"}`,
		"modules/shout/run.py":      "import json\nprint(json.dumps('x' * 5000))\n",
	})
	if err := rt.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	rs := runmodule.Run(ctx, rt, `[RUN_MODULE]{"name": "shout", "args": {}}[/RUN_MODULE]`)
	if rs := runmodule.Run(ctx, rt, `[RUN_MODULE]{"name": "shout", "args": {"loud": true}}[/RUN_MODULE]`); rs[0].Result.Error == nil || rs[0].Result.Error.Kind != run.KindInvalidArgs {
		t.Errorf("an argument to a module that declares none: %+v", rs[0].Result)
	}
	if len(rs) != 1 || rs[0].Err == nil || rs[0].Result.Error.Kind != run.KindOutputLimit {
		t.Errorf("a module past maxOutputBytes: %+v %v", rs[0].Result.Error, rs[0].Err)
	}

	write(t, dir, "other", imageGen("Makes other images."))
	if err := rt.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if r := answer(`{"prompt": "a"}`); r.Err == nil || !strings.Contains(r.Result.Error.Message, "image-generation/image_gen or other/image_gen") {
		t.Errorf("a module in two skills: %+v", r.Result.Error)
	}
	rs = runmodule.Run(ctx, rt, `[RUN_MODULE]{"name": "other/image_gen", "args": {"prompt": "b"}}[/RUN_MODULE]`)
	if len(rs) != 1 || rs[0].Err != nil || !strings.Contains(string(rs[0].Result.Result), "b.png") {
		t.Errorf("skill/module: %+v", rs)
	}
	rs = runmodule.Run(ctx, rt, `[RUN_MODULE]{"name": "nosuch", "args": {}}[/RUN_MODULE]`)
	if len(rs) != 1 || rs[0].Err == nil || rs[0].Result.Error.Kind != run.KindNotFound {
		t.Errorf("no such module: %+v", rs)
	}
	var out struct{ Image string }
	if err := json.Unmarshal(rs[0].Result.Result, &out); err == nil && out.Image != "" {
		t.Errorf("an unknown module answered %+v", out)
	}
}

// Each bound of what a skill's modules make the host read is crossed: more modules than
// MaxModules, a module.json past MaxManifestBytes, a modules/ of more entries than it lists.
func TestLoadBounds(t *testing.T) {
	mod := func(name string) string {
		return `{"name": "` + name + `", "command": ["python", "run.py"]}`
	}
	files := map[string]string{}
	for i := range modules.MaxModules {
		name := fmt.Sprintf("m%03d", i)
		files["modules/"+name+"/module.json"] = mod(name)
	}
	dir := write(t, t.TempDir(), "many", files)
	if mods, err := modules.Load(dir); err != nil || len(mods) != modules.MaxModules {
		t.Fatalf("%d modules, the most: %d, %v", modules.MaxModules, len(mods), err)
	}
	write(t, filepath.Dir(dir), "many", map[string]string{"modules/zzz/module.json": mod("zzz")})
	if _, err := modules.Load(dir); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d modules", modules.MaxModules)) {
		t.Errorf("one more: %v", err)
	}

	big := write(t, t.TempDir(), "big", map[string]string{
		"modules/a/module.json": `{"name": "a", "description": "` + strings.Repeat("x", modules.MaxManifestBytes) + `"}`,
	})
	if _, err := modules.Load(big); err == nil || !strings.Contains(err.Error(), "modules/a/module.json") {
		t.Errorf("a module.json past the bound: %v", err)
	}

	crowd := map[string]string{}
	for i := range 1025 {
		crowd[fmt.Sprintf("modules/f%04d", i)] = ""
	}
	if _, err := modules.Load(write(t, t.TempDir(), "crowd", crowd)); err == nil || !strings.Contains(err.Error(), "more than 1024 entries") {
		t.Errorf("a crowded modules/: %v", err)
	}
}
