package main

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
	"github.com/skillbox-dev/skillbox/sdk/go/skillboxtest"
)

// TestConformanceNative runs the conformance handler natively against skillboxtest's
// scripted host, set up like the real host's fixture in ../conformance_test.go (the same
// grant, files and server answers), and expects the result every guest gives on the real
// host, from the same file. It holds the fake to the host's statuses.
func TestConformanceNative(t *testing.T) {
	echo := func(req skill.Request) (*skill.Response, error) {
		return &skill.Response{
			Headers: map[string]string{"X-Echo": req.Headers["X-Test"], "Content-Type": "text/plain; charset=utf-8"},
			Body:    []byte(req.Method + ":" + string(req.Body)),
		}, nil
	}
	const srv = "http://127.0.0.1:8080"
	h := skillboxtest.New(
		skillboxtest.Route("GET", srv+"/echo", echo),
		skillboxtest.Route("POST", srv+"/echo", echo),
		skillboxtest.Route("GET", "http://127.0.0.1:9/", skillboxtest.Fail(skill.Failed, "http://127.0.0.1:9/: connection refused")),
		skillboxtest.Env("GREETING", "hej"),
		skillboxtest.Mount("/workspace", skillboxtest.ReadWrite),
		skillboxtest.Mount("/data", skillboxtest.ReadOnly),
		skillboxtest.File("/workspace/in.txt", "input text"),
		skillboxtest.File("/data/ro.txt", "read only"),
		skillboxtest.WithLimits(skillboxtest.Limits{MaxWriteBytes: 1000}),
	)
	res := skillboxtest.Run(h, conform, map[string]any{
		"fetchUrl": srv + "/echo", "deniedUrl": "http://example.invalid/", "missingUrl": "http://127.0.0.1:9/",
		"envName": "GREETING", "deniedEnv": "HOME",
		"readPath": "/workspace/in.txt", "missingPath": "/workspace/nope.txt",
		"writePath": "/workspace/out/result.txt", "writeData": "written by conformance",
		"readOnlyPath": "/data/ro.txt", "escapePath": "/workspace/../etc/passwd", "bigWrite": 5000,
	})
	var got, want map[string]any
	if err := res.Decode(&got); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../conformance_want.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: got %#v, want %#v", k, got[k], want[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys, want %d", len(got), len(want))
	}

	// What the fake recorded matches what the host records for the same run.
	var levels []string
	for _, l := range h.Logs() {
		if strings.HasPrefix(l.Message, "conformance: ") {
			levels = append(levels, l.String())
		}
	}
	if want := []string{"debug: conformance: debug", "info: conformance: info", "warn: conformance: warn", "error: conformance: error"}; !reflect.DeepEqual(levels, want) {
		t.Errorf("logs %q", levels)
	}
	denied := strings.Join(h.Denied(), "\n")
	for _, w := range []string{"fetch http://example.invalid/", "env HOME", "write /data/ro.txt"} {
		if !strings.Contains(denied, w) {
			t.Errorf("denied lacks %q:\n%s", w, denied)
		}
	}
	if text, ok := h.File("/workspace/out/result.txt"); !ok || text != "written by conformance" {
		t.Errorf("file written: %q %v", text, ok)
	}
}
