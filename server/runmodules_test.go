package server

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/runmodule"
)

// POST /v1/run-modules answers the [RUN_MODULE] blocks of a model's message, a module of an
// Autobyteus skill (modules/<name>/module.json) among them, with each result and the
// [MODULE_RESULT] text to send back; a viewer may not, and a body without text is a 400.
func TestRunModulesOverHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "image-generation"), map[string]string{
		"SKILL.md":                      "---\nname: image-generation\ndescription: Makes images.\n---\nCall image_gen.\n",
		"modules/image_gen/module.json": `{"name": "image_gen", "command": ["python", "run.py"], "arguments": [{"name": "prompt", "type": "string", "required": true}]}`,
		"modules/image_gen/run.py":      "import json, sys\nprint(json.dumps({'image': json.load(sys.stdin)['args']['prompt'] + '.png'}))\n",
	})
	env := newEnv(t, keysOptions(), dir)
	text := "Drawing it now.\n[RUN_MODULE]\n{\"name\": \"image_gen\", \"args\": {\"prompt\": \"teapot\"}}\n[/RUN_MODULE]\n" +
		"[RUN_MODULE]{\"name\": \"image_gen\", \"args\": {}}[/RUN_MODULE]"
	body, _ := json.Marshal(map[string]string{"text": text})
	var a runmodule.Answer
	post(t, env.ts.URL+"/v1/run-modules", string(body), "X-API-Key", roleKeys[access.RoleRunner]).decode(t, &a)
	if len(a.Results) != 2 || a.Results[0].Name != "image_gen" || a.Results[0].Line != 2 || string(a.Results[0].Result.Result) != `{"image":"teapot.png"}` {
		t.Fatalf("%+v", a)
	}
	if r := a.Results[1].Result; r.Success || r.Error == nil || r.Error.Kind != "invalid_args" || !strings.Contains(r.Error.Message, "prompt") {
		t.Errorf("a block without its required argument: %+v", r)
	}
	if strings.Count(a.Text, runmodule.ResultOpen) != 2 || !strings.Contains(a.Text, `teapot.png`) {
		t.Errorf("the text: %s", a.Text)
	}
	wantError(t, post(t, env.ts.URL+"/v1/run-modules", string(body), "X-API-Key", roleKeys[access.RoleViewer]), 403, "forbidden")
	wantError(t, post(t, env.ts.URL+"/v1/run-modules", `{"message": "x"}`, "X-API-Key", roleKeys[access.RoleRunner]), 400, "bad_request")
	long, _ := json.Marshal(map[string]string{"text": strings.Repeat("a", runmodule.MaxTextBytes+1)})
	wantError(t, post(t, env.ts.URL+"/v1/run-modules", string(long), "X-API-Key", roleKeys[access.RoleRunner]), 413, "too_large")
}
