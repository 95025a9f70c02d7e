package server

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// newTestServer serves the bundled skills (../skills) with opts over a real loopback listener.
func newTestServer(t *testing.T, opts Options) (*httptest.Server, *runtime.Runtime) {
	t.Helper()
	env := newEnv(t, opts, "../skills")
	return env.ts, env.rt
}

// do is send with a string body, returning the status and the body as text.
func do(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	if method == "POST" {
		header = append([]string{"Content-Type", "application/json"}, header...)
	}
	r := send(t, method, url, strings.NewReader(body), header...)
	return r.status, string(r.body)
}

func TestSmoke(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	tests := []struct {
		method, path, body string
		status             int
		contains           string
	}{
		{"GET", "/healthz", "", 200, `"ok"`},
		{"GET", "/v1/skills", "", 200, `"id":"word-count"`},
		{"GET", "/v1/skills/nope", "", 404, `"code":"not_found"`},
		{"POST", "/v1/skills/word-count/runs", `{"args":{"text":"a b a"}}`, 200, `"words":3`},
		{"POST", "/v1/runs", `{"skill":"hello","input":{"name":"Ada"}}`, 200, `Hello, Ada!`},
		{"POST", "/v1/skills/word-count/runs", `{"args":{"text":5}}`, 422, `argument \"text\"`},
		{"POST", "/v1/skills/word-count/runs", `{"args":`, 400, `"code":"bad_request"`},
		{"POST", "/v1/skills/nope/runs", `{}`, 404, `no skill \"nope\"`},
		{"GET", "/v1/tools?format=openai", "", 200, `"type":"function"`},
		{"GET", "/openapi.json", "", 200, `"3.1.0"`},
	}
	for _, tc := range tests {
		status, body := do(t, tc.method, ts.URL+tc.path, tc.body)
		if status != tc.status || !strings.Contains(body, tc.contains) {
			t.Errorf("%s %s: %d %s; want %d containing %q", tc.method, tc.path, status, body, tc.status, tc.contains)
		}
	}
	var res run.Result
	_, body := do(t, "POST", ts.URL+"/v1/skills/hello/runs", `{}`)
	if err := json.Unmarshal([]byte(body), &res); err != nil || !res.Success {
		t.Fatalf("%v %s", err, body)
	}
	if status, body := do(t, "GET", ts.URL+"/v1/runs/"+res.RunID, ""); status != 200 || !strings.Contains(body, res.RunID) {
		t.Errorf("run history: %d %s", status, body)
	}
}
