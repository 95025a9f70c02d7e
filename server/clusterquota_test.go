package server

import (
	"net/http"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/runtime"
)

// A tenant's concurrentRuns holds across replicas: with one run in flight on a, a run on b is
// refused quota_exceeded, though b has room; once the first ends, b runs.
func TestClusterQuotaHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	hub, other := twoNodes(t)
	replica := func(sq runtime.SharedQuota) *testEnv {
		dir := t.TempDir()
		fixture(t, dir, "ticker", manifestJSON("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":60000}`), "ticker", nil)
		sh := testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache, Admission: runtime.Admission{MaxRuns: 4}})
		env := newEnvRuntime(t, Options{}, runtime.Config{Shared: sh, Quota: runtime.Quota{ConcurrentRuns: 1}}, dir)
		if err := env.rt.ShareQuota(sq); err != nil {
			t.Fatal(err)
		}
		return env
	}
	a, b := replica(hub), replica(other)
	first := startAsyncStatus(t, a.ts.URL, endlessTicks, "running")
	e := wantError(t, post(t, b.ts.URL+"/v1/skills/ticker/runs", `{"args":{"count":1,"ms":1}}`), http.StatusTooManyRequests, "quota_exceeded")
	if e.Error.Message == "" {
		t.Fatal("the refusal says nothing")
	}
	if r := post(t, a.ts.URL+first.Links.Cancel, ``); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %s", r)
	}
	if !waitFor(hangGuard, func() bool {
		return post(t, b.ts.URL+"/v1/skills/ticker/runs", `{"args":{"count":1,"ms":1}}`).status == http.StatusOK
	}) {
		t.Fatal("b never ran once a's run ended")
	}
}
