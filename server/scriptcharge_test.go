package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// TestScriptRunsAreChargedTheirLimit: under a 1 GiB memory budget and 40 run slots, 32
// JavaScript runs of memoryMiB 16, each waiting on a slow loopback fetch, execute at once — none
// waits for memory, and /metrics shows 32 in flight. A script's run is charged its memory limit,
// its bounded call stack and its buffers, not the 160 MiB wazero's unbounded stack could hold.
func TestScriptRunsAreChargedTheirLimit(t *testing.T) {
	const n = 32
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
		}
		fmt.Fprint(w, "done")
	}))
	defer upstream.Close()
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free() // before upstream.Close, which waits for its handlers

	dir := t.TempDir()
	skill := filepath.Join(dir, "slow-fetch")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	// Small buffers, so that what is charged is the memory limit and the stack; no deadline
	// that a slow machine could reach before the 32 runs are in flight.
	manifest := `{"id":"slow-fetch","name":"Slow fetch","description":"Waits on a loopback fetch.","version":"1.0.0",
	  "parameters":{"url":{"type":"string","required":true}},"permissions":{"network":["127.0.0.1"]},
	  "limits":{"memoryMiB":16,"timeoutMs":3600000,"maxFetchBytes":65536,"maxFileBytes":65536,"maxWriteBytes":65536,"maxOutputBytes":65536,"maxLogBytes":65536}}`
	code := `export async function execute(args, ctx) { const r = await ctx.fetch(args.url); return await r.text(); }`
	for name, body := range map[string]string{"skill.json": manifest, "execute.js": code} {
		if err := os.WriteFile(filepath.Join(skill, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := &policy.Policy{Network: []string{"127.0.0.1"}, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Limits: spec.Limits{TimeoutMs: 3600000}}
	adm := runtime.Admission{MemoryBudget: 1 << 30, MaxRuns: 40}
	env := newEnvRuntime(t, Options{}, runtime.Config{Policy: pol, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache, Admission: adm})}, dir)

	runOnce := func(path string) (int, string) {
		return do(t, "POST", env.ts.URL+"/v1/skills/slow-fetch/runs", fmt.Sprintf(`{"args":{"url":%q}}`, upstream.URL+path))
	}
	// The interpreter compiled and warm first: what follows measures runs only.
	if status, body := runOnce("/fast"); status != 200 || !strings.Contains(body, `"done"`) {
		t.Fatalf("warm-up run: %d %s", status, body)
	}

	type answer struct {
		status int
		body   string
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			status, body := runOnce("/slow")
			answers <- answer{status, body}
		}()
	}
	// Wait for the 32 fetches to arrive, failing as soon as one run waits for admission instead.
	// Nothing here is timed: a slow machine only makes the wait longer.
	for got := 0; got < n; {
		select {
		case <-arrived:
			got++
		case a := <-answers:
			t.Fatalf("a run ended before the fetches were released: %d %s", a.status, a.body)
		case <-time.After(20 * time.Millisecond):
			if st := env.rt.Stats().Admission; st.Queued > 0 {
				t.Fatalf("%d of %d runs wait for admission with %d in flight: charged %d MiB of %d MiB",
					st.Queued, n, st.Running, st.MemoryInUse>>20, st.MemoryBudget>>20)
			}
		}
	}
	metrics := get(t, env.ts.URL+"/metrics")
	for _, want := range []string{fmt.Sprintf("\nskillbox_runs_in_flight %d\n", n), "\nskillbox_runs_queued 0\n"} {
		if !strings.Contains(string(metrics.body), want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	st := env.rt.Stats().Admission
	t.Logf("%d runs in flight, charged %d MiB of the %d MiB budget (%.1f MiB a run, the warm interpreter included)",
		st.Running, st.MemoryInUse>>20, st.MemoryBudget>>20, float64(st.MemoryInUse)/float64(n)/(1<<20))
	free()
	for range n {
		a := <-answers
		var res run.Result
		if a.status != 200 || json.Unmarshal([]byte(a.body), &res) != nil || !res.Success {
			t.Errorf("run: %d %s", a.status, a.body)
		}
	}
}
