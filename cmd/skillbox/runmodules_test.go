package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/runmodule"
)

// skillbox run-modules answers a model's message read from stdin or a file: the
// [MODULE_RESULT] block of each [RUN_MODULE] block, a module of an Autobyteus skill among them,
// exiting 1 when a call failed; --json gives each result.
func TestRunModules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"SKILL.md":                      "---\nname: image-generation\ndescription: Makes images.\n---\nCall image_gen.\n",
		"modules/image_gen/module.json": `{"name": "image_gen", "command": ["python3", "run.py"], "arguments": [{"name": "prompt", "type": "string", "required": true}]}`,
		"modules/image_gen/run.py":      "import json, sys\nprint(json.dumps({'image': json.load(sys.stdin)['args']['prompt'] + '.png'}))\n",
	} {
		p := filepath.Join(dir, "image-generation", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	msg := "[RUN_MODULE]\n{\"name\": \"image_gen\", \"args\": {\"prompt\": \"teapot\"}}\n[/RUN_MODULE]"
	expect{code: exitOK, stdout: []string{runmodule.ResultOpen, `{"name":"image_gen","success":true,"result":{"image":"teapot.png"}}`}}.
		verify(t, cli(t, msg, "--skills", dir, "run-modules"))

	file := filepath.Join(t.TempDir(), "reply.txt")
	if err := os.WriteFile(file, []byte(msg+"\n[RUN_MODULE]{\"name\": \"nosuch\"}[/RUN_MODULE]"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "", "--skills", dir, "run-modules", file, "--json")
	expect{code: exitFailed}.verify(t, r)
	var a runmodule.Answer
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || len(a.Results) != 2 || !a.Results[0].Result.Success ||
		a.Results[1].Result.Success || a.Results[1].Result.Error.Kind != "not_found" {
		t.Errorf("--json: %v %s", err, r.stdout)
	}
	expect{code: exitOK, stderr: []string{"no [RUN_MODULE] block"}}.verify(t, cli(t, "just text", "--skills", dir, "run-modules"))
	expect{code: exitUsage, stderr: []string{"at most one file"}}.verify(t, cli(t, "", "run-modules", "a", "b"))
}

// validate reads each module.json of a skill: a problem makes the skill invalid, named by the
// file and the field.
func TestValidateChecksModules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"SKILL.md":                "---\nname: mods\ndescription: Has modules.\n---\nx\n",
		"modules/ok/module.json":  `{"name": "ok", "command": ["python", "run.py"]}`,
		"modules/bad/module.json": `{"name": "bad", "command": ["bash", "run.sh"]}`,
	} {
		p := filepath.Join(dir, "mods", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect{code: exitFailed, stdout: []string{"invalid mods", "modules/bad/module.json: command: names no program"}}.verify(t, cli(t, "", "validate", dir))
	if err := os.Remove(filepath.Join(dir, "mods", "modules", "bad", "module.json")); err != nil {
		t.Fatal(err)
	}
	expect{code: exitOK, stdout: []string{"ok      mods"}}.verify(t, cli(t, "", "validate", dir))
}
