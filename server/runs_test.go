package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// runsEnv is the WAT skills plus an instructions-only skill and a broken one, with a small run
// body limit.
func runsEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", `"version":"1.0.0"`), "hello", nil)
	fixture(t, dir, "echo", manifestJSON("echo", `"version":"1.0.0","parameters":{"type":"object","properties":{"n":{"type":"integer"}}}`), "echo", nil)
	fixture(t, dir, "loop", manifestJSON("loop", `"limits":{"timeoutMs":100}`), "loop", nil)
	fixture(t, dir, "broken", manifestJSON("broken", `"colour":"red"`), "hello", nil)
	writeFiles(t, dir, map[string]string{"guide/SKILL.md": "---\nname: guide\ndescription: How to do things.\n---\n\nDo things.\n"})
	return newEnvRuntime(t, Options{}, runtime.Config{MaxArgsBytes: 256}, dir)
}

func TestRunRequests(t *testing.T) {
	t.Parallel()
	env := runsEnv(t)
	big := `{"args":{"n":1,"pad":"` + strings.Repeat("x", 2*envelopeBytes) + `"}}`
	over := `{"args":{"n":1,"pad":"` + strings.Repeat("x", 300) + `"}}` // past the arguments' bound, within the body's
	tests := []struct {
		name       string
		path, body string // given
		status     int    // expect
		code       string // the error code, for non-200
		contains   string // in the body
	}{
		{"empty body is {} args", "/v1/skills/hello/runs", "", 200, "", `"greeting":"hi"`},
		{"blank body is {} args", "/v1/skills/hello/runs", " \n\t", 200, "", `"greeting":"hi"`},
		{"empty object", "/v1/skills/hello/runs", `{}`, 200, "", `"success":true`},
		{"empty args", "/v1/skills/hello/runs", `{"args":{}}`, 200, "", `"success":true`},
		{"args reach the skill", "/v1/skills/echo/runs", `{"args":{"n":7}}`, 200, "", `"result":{"n":7}`},
		{"malformed JSON", "/v1/skills/hello/runs", `{"args":`, 400, "bad_request", "not the expected JSON"},
		{"not an object", "/v1/skills/hello/runs", `[1,2]`, 400, "bad_request", ""},
		{"unknown field", "/v1/skills/hello/runs", `{"argz":{}}`, 400, "bad_request", "argz"},
		{"args of the wrong type", "/v1/skills/echo/runs", `{"args":"x"}`, 422, "invalid_args", "object"},
		{"argument of the wrong type is named", "/v1/skills/echo/runs", `{"args":{"n":"seven"}}`, 422, "invalid_args", `\"n\"`},
		{"undeclared argument is named", "/v1/skills/hello/runs", `{"args":{"name":"x"}}`, 422, "invalid_args", "name"},
		{"null args are no arguments", "/v1/skills/hello/runs", `{"args":null}`, 200, "", "greeting"},
		{"body over the arguments' bound and the envelope", "/v1/skills/echo/runs", big, 413, "too_large", "4352"},
		{"arguments over the bound", "/v1/skills/echo/runs", over, 422, "invalid_args", "runs.maxArgsBytes"},
		{"unknown skill", "/v1/skills/nope/runs", `{}`, 404, "not_found", "nope"},
		{"instructions-only skill", "/v1/skills/guide/runs", `{}`, 404, "not_found", "guide"},
		{"broken skill", "/v1/skills/broken/runs", `{}`, 409, "skill_broken", "broken"},
		{"a run that fails is still 200", "/v1/skills/loop/runs", `{}`, 200, "", `"kind":"timeout"`},

		{"runs route with skill and input", "/v1/runs", `{"skill":"echo","input":{"n":3}}`, 200, "", `"result":{"n":3}`},
		{"runs route without input", "/v1/runs", `{"skill":"hello"}`, 200, "", `"greeting":"hi"`},
		{"runs route without skill", "/v1/runs", `{"input":{}}`, 400, "bad_request", `\"skill\"`},
		{"runs route empty body", "/v1/runs", ``, 400, "bad_request", `\"skill\"`},
		{"runs route with args instead of input", "/v1/runs", `{"skill":"hello","args":{}}`, 200, "", "greeting"},
		{"runs route with both args and input", "/v1/runs", `{"skill":"hello","args":{},"input":{}}`, 400, "bad_request", "not both"},
		{"runs route with a tool name", "/v1/runs", `{"skill":"skill_hello"}`, 200, "", "greeting"},
		{"runs route unknown skill", "/v1/runs", `{"skill":"nope"}`, 404, "not_found", "nope"},
		{"runs route invalid input", "/v1/runs", `{"skill":"echo","input":{"n":1.5}}`, 422, "invalid_args", `\"n\"`},
		{"runs route too large", "/v1/runs", `{"skill":"echo","input":{"pad":"` + strings.Repeat("y", 2*envelopeBytes) + `"}}`, 413, "too_large", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := post(t, env.ts.URL+tc.path, tc.body, "Content-Type", "application/json")
			if tc.status == 200 {
				if r.status != 200 {
					t.Fatalf("got %s, want 200", r)
				}
				if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type %q", ct)
				}
			} else {
				wantError(t, r, tc.status, tc.code)
			}
			if !strings.Contains(string(r.body), tc.contains) {
				t.Errorf("body %s does not contain %q", r.body, tc.contains)
			}
		})
	}
}

// A strict decoder that refuses unknown fields should refuse trailing data too: `{"args":{}}
// {"args":{"n":1}}` is two documents, and which one counts is a guess.
func TestRunRefusesTrailingData(t *testing.T) {
	t.Parallel()

	env := runsEnv(t)
	for _, body := range []string{`{"args":{}} {"args":{"n":1}}`, `{"args":{}}garbage`} {
		r := post(t, env.ts.URL+"/v1/skills/echo/runs", body)
		wantError(t, r, 400, "bad_request")
	}
}

func TestRunResultShape(t *testing.T) {
	t.Parallel()
	ts, _ := newTestServer(t, Options{})
	r := post(t, ts.URL+"/v1/skills/word-count/runs", `{"args":{"text":"a b a","top":1}}`)
	if r.status != 200 {
		t.Fatal(r)
	}
	var raw map[string]json.RawMessage
	r.decode(t, &raw)
	for _, k := range []string{"run_id", "skill", "version", "success", "result", "logs", "duration_ms", "usage"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("result has no %q: %s", k, r.body)
		}
	}
	if _, ok := raw["error"]; ok {
		t.Errorf("a successful run has an error: %s", r.body)
	}
	res := runResult(t, r)
	if !strings.HasPrefix(res.RunID, "run_") || res.Skill != "word-count" || res.Version != "1.0.0" || !res.Success || res.DurationMs <= 0 {
		t.Errorf("result %+v", res)
	}
	var value struct {
		Words int `json:"words"`
	}
	if err := json.Unmarshal(res.Result, &value); err != nil || value.Words != 3 {
		t.Errorf("result value %s", res.Result)
	}
	if string(raw["logs"]) == "null" {
		t.Errorf("logs is null, want a list")
	}
	if res.Usage.PeakMemoryBytes == 0 {
		t.Errorf("no peak memory in %s", raw["usage"])
	}

	// A failed run: success false, error.kind and message, no result.
	r = post(t, ts.URL+"/v1/skills/http-get/runs", `{"args":{"url":"https://not-allowed.example.org/"}}`)
	res = runResult(t, r)
	if res.Success || res.Error == nil || res.Error.Kind == "" || res.Error.Message == "" || res.Result != nil {
		t.Errorf("failed run: %s", r.body)
	}
}

func TestRunHistory(t *testing.T) {
	t.Parallel()
	env := watEnvRuntime(t, Options{}, runtime.Config{History: runtime.History{MaxRuns: 2}}, 100)
	var ids []string
	for i := 0; i < 3; i++ {
		res := runResult(t, post(t, env.ts.URL+"/v1/skills/echo/runs", fmt.Sprintf(`{"args":{"i":%d}}`, i)))
		ids = append(ids, res.RunID)
	}
	tests := []struct {
		name   string
		id     string
		status int
		want   string
	}{
		{"the latest run", ids[2], 200, `"result":{"i":2}`},
		{"the one before", ids[1], 200, `"result":{"i":1}`},
		{"evicted past History.MaxRuns", ids[0], 404, ""},
		{"never was", "run_000000000000000000000000", 404, ""},
		{"not even an id", "..%2F..%2Fetc", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, env.ts.URL+"/v1/runs/"+tc.id)
			if tc.status != 200 {
				wantError(t, r, tc.status, "not_found")
				return
			}
			res := runResult(t, r)
			if res.RunID != tc.id || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("history %s: %s", tc.id, r.body)
			}
		})
	}
	// A failed run is remembered too, with its error.
	res := runResult(t, post(t, env.ts.URL+"/v1/skills/loop/runs", ``))
	got := runResult(t, get(t, env.ts.URL+"/v1/runs/"+res.RunID))
	if got.Error == nil || got.Error.Kind != run.KindTimeout {
		t.Errorf("failed run in history: %+v", got)
	}
}

// MaxRuns 1 and MaxQueue 1: one run runs, one waits, the third is refused with 429 and
// Retry-After, before any work.
func TestRunQueueFull(t *testing.T) {
	t.Parallel()
	// hold loops until the test cancels it (its timeout is far off): it keeps the only slot
	// for as long as the test needs. loop is the quick one that times out.
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", `"version":"1.0.0"`), "hello", nil)
	fixture(t, dir, "loop", manifestJSON("loop", `"limits":{"timeoutMs":100}`), "loop", nil)
	fixture(t, dir, "hold", manifestJSON("hold", `"limits":{"timeoutMs":60000}`), "loop", nil)
	// MaxWait is long: the queued run waits for the slot however slow the machine.
	env := newEnvRuntime(t, Options{}, runtime.Config{Shared: testengine.Shared(t, runtime.SharedConfig{Admission: runtime.Admission{MaxRuns: 1, MaxQueue: 1, MaxWait: 10 * time.Minute}})}, dir)
	base := env.ts.URL

	// First run: wait until it is running, so it holds the only slot.
	first := make(chan run.Result, 1)
	running := make(chan string, 1) // its run id; "" if it never ran
	go func() {
		req, _ := http.NewRequest("POST", base+"/v1/skills/hold/runs", strings.NewReader(`{}`))
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			running <- ""
			return
		}
		defer resp.Body.Close()
		once := sync.Once{}
		readSSE(t, resp.Body, func(e sseEvent) bool {
			if e.ev.Status == "running" {
				once.Do(func() { running <- e.ev.RunID })
			}
			if e.ev.Type == "result" {
				first <- *e.ev.Result
			}
			return true
		})
		once.Do(func() { running <- "" })
	}()
	holding := <-running
	if holding == "" {
		t.Fatal("the first run never ran")
	}

	// Two more at once: one takes the queue's only place, the other is refused. The refusal
	// comes back first: the queued run cannot end while the first holds the slot.
	replies := make(chan reply, 2)
	for range 2 {
		go func() { replies <- post(t, base+"/v1/skills/loop/runs", `{}`) }()
	}
	r := <-replies
	wantError(t, r, 429, "busy")
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1", ra)
	}
	// Now let the first run go: the queued one gets the slot, and times out.
	if c := post(t, base+"/v1/runs/"+holding+"/cancel", ``); c.status != 202 {
		t.Fatalf("cancel the first run: %s", c)
	}
	r = <-replies
	if res := runResult(t, r); res.Error == nil || res.Error.Kind != run.KindTimeout {
		t.Errorf("queued run: %s", r.body)
	}
	if res := <-first; res.Error == nil || res.Error.Kind != run.KindCanceled {
		t.Errorf("first run %+v", res)
	}
	text := metricsText(t, base)
	if v, _ := metricValue(text, "skillbox_runs_rejected_total"); v != 1 {
		t.Errorf("rejected_total %v, want 1", v)
	}
	if v, _ := metricValue(text, `skillbox_runs_total{skill="loop",face="http",outcome="timeout"}`); v != 1 {
		t.Errorf("loop timeouts %v, want 1 (the queued run)", v)
	}
	if v, _ := metricValue(text, `skillbox_runs_total{skill="loop",face="http",outcome="busy"}`); v != 1 {
		t.Errorf("loop busy %v, want 1 (the 429)", v)
	}
	if v, _ := metricValue(text, `skillbox_runs_total{skill="hold",face="http",outcome="canceled"}`); v != 1 {
		t.Errorf("hold canceled %v, want 1 (the first run)", v)
	}
	// The slots are free again: a quick run gets through.
	if res := runResult(t, post(t, base+"/v1/skills/hello/runs", ``)); !res.Success {
		t.Errorf("after the burst: %+v", res)
	}
}
