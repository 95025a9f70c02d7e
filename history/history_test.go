package history_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/run"
)

// A record reads as the run's result with who asked, how and when beside it: the Result's fields
// inline, not nested under a key of their own, and the arguments only when the policy kept them.
func TestRecordJSON(t *testing.T) {
	rec := history.Record{Result: &run.Result{RunID: "run_1", Skill: "echo", Success: true}, Face: run.FaceHTTP, Caller: "ci",
		StartedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), ArgsSHA256: "44136fa3"}
	var data []byte
	fields := func() map[string]json.RawMessage {
		t.Helper()
		var err error
		if data, err = json.Marshal(rec); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := fields()
	for _, k := range []string{"run_id", "skill", "success", "face", "caller", "started_at", "args_sha256"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, data)
		}
	}
	for _, k := range []string{"Result", "result", "args", "tenant", "visible_to", "trimmed"} {
		if v, ok := m[k]; ok {
			t.Errorf("%q is %s: want it left out", k, v)
		}
	}
	rec.Args = json.RawMessage(`{"text":"a b"}`)
	if got := string(fields()["args"]); got != `{"text":"a b"}` {
		t.Errorf("kept arguments read %s", got)
	}
}
