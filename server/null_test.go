package server

import (
	"encoding/json"
	"testing"
)

// TestRunNullMeansOmitted: a run whose optional arguments are null (as OpenAI's strict mode
// writes them) runs with their defaults; a null the schema accepts reaches the module.
func TestRunNullMeansOmitted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixture(t, dir, "echo", manifestJSON("echo", `"parameters":{"type":"object",
		"properties":{"text":{"type":"string"},"top":{"type":"integer","default":5},"note":{"type":["string","null"]}},
		"required":["text"],"additionalProperties":false}`), "echo", nil)
	e := newEnv(t, Options{}, dir)
	for _, path := range []string{"/v1/skills/echo/runs", "/v1/runs"} {
		body := `{"skill":"echo","args":{"text":"a","top":null,"note":null}}`
		if path != "/v1/runs" {
			body = `{"args":{"text":"a","top":null,"note":null}}`
		}
		res := runResult(t, post(t, e.ts.URL+path, body))
		var got any
		_ = json.Unmarshal(res.Result, &got)
		if b, _ := json.Marshal(got); !res.Success || string(b) != `{"note":null,"text":"a","top":5}` {
			t.Errorf("%s: success %v, result %s, error %+v; want the defaults in place of the nulls", path, res.Success, res.Result, res.Error)
		}
	}
}
