package toolset

import (
	"context"
	"encoding/json"
	"testing"
)

// nullManifest has an optional argument with a default, and one whose schema accepts null.
const nullManifest = `{"id":"echo","name":"Echo","description":"Returns its arguments","parameters":{"type":"object",
	"properties":{"text":{"type":"string"},"top":{"type":"integer","default":5},"note":{"type":["string","null"]}},
	"required":["text"],"additionalProperties":false}}`

// TestCallNullMeansOmitted: a tool call as OpenAI's strict mode writes it (null for every
// optional argument left out) runs with the defaults, through skill_<id> and run_skill alike;
// a null the schema accepts reaches the module.
func TestCallNullMeansOmitted(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "echo", map[string]string{"skill.json": nullManifest}, true)
	rt := newRuntime(t, dir, nil)
	const want = `{"note":null,"text":"a","top":5}`
	for name, args := range map[string]string{
		"skill_echo": `{"text":"a","top":null,"note":null}`,
		ToolRunSkill: `{"skill":"echo","args":{"text":"a","top":null,"note":null}}`,
	} {
		res, err := Call(context.Background(), rt, name, []byte(args))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got any
		if err := json.Unmarshal(res.Result, &got); err != nil {
			t.Fatalf("%s: result %s: %v", name, res.Result, err)
		}
		if b, _ := json.Marshal(got); string(b) != want {
			t.Errorf("%s: the module got %s, want %s", name, b, want)
		}
	}
}
