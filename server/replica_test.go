package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// Two replicas share one run history: a run in flight on one is 404 "not_here" on the other
// for its events and its cancel, and once it has finished, the other says its events are gone
// (404 "expired") and that there is nothing to cancel (409), from what the history records.
func TestLiveRunsAcrossReplicas(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, err := sqlite.Open(t.Context(), filepath.Join(root, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	replica := func() *testEnv {
		rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
		dir := t.TempDir()
		fixture(t, dir, "ticker", manifestJSON("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":60000}`), "ticker", nil)
		return newEnvRuntime(t, Options{History: s}, runtime.Config{Recorder: rec}, dir)
	}
	a, b := replica(), replica()
	run := startAsync(t, a.ts.URL, "/v1/skills/ticker/runs", endlessTicks)
	if !waitFor(hangGuard, func() bool {
		r, err := s.FindRun(t.Context(), run.RunID)
		return err == nil && r.Status == store.StatusRunning
	}) {
		t.Fatal("the run's start is not in the history")
	}
	for _, r := range []reply{get(t, b.ts.URL+run.Links.Events), post(t, b.ts.URL+run.Links.Cancel, ``)} {
		if e := wantError(t, r, 404, "not_here"); !strings.Contains(e.Error.Message, "another process") {
			t.Errorf("message %q", e.Error.Message)
		}
	}
	if r := post(t, a.ts.URL+run.Links.Cancel, ``); r.status != 202 {
		t.Fatalf("cancel on its replica: %s", r)
	}
	watch(t, a.ts.URL+run.Links.Events)
	if !waitFor(hangGuard, func() bool {
		r, err := s.FindRun(t.Context(), run.RunID)
		return err == nil && r.Status == store.StatusFailed
	}) {
		t.Fatal("the run's end is not in the history")
	}
	if e := wantError(t, get(t, b.ts.URL+run.Links.Events), 404, "expired"); !strings.Contains(e.Error.Message, "failed") {
		t.Errorf("message %q", e.Error.Message)
	}
	if e := wantError(t, post(t, b.ts.URL+run.Links.Cancel, ``), 409, "run_finished"); !strings.Contains(e.Error.Message, "failed") {
		t.Errorf("message %q", e.Error.Message)
	}
}
