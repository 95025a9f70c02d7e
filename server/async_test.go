package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// liveEnv serves ticker (logs "tick" count times, ms apart; timeoutMs 60000), echo and strict
// (echo with a required integer n) with opts and a runtime configured by cfg.
func liveEnv(t testing.TB, opts Options, cfg runtime.Config) *testEnv {
	t.Helper()
	dir := t.TempDir()
	fixture(t, dir, "ticker", manifestJSON("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":60000}`), "ticker", nil)
	fixture(t, dir, "echo", manifestJSON("echo", `"parameters":{"type":"object"}`), "echo", nil)
	fixture(t, dir, "strict", manifestJSON("strict", `"parameters":{"n":{"type":"integer","required":true}}`), "echo", nil)
	return newEnvRuntime(t, opts, cfg, dir)
}

// endlessTicks are ticker arguments for a run that does not end by itself while a test needs it
// in flight (a tick every 20ms for weeks): the test ends it with a cancel, or failing that its
// timeout (60 s) does.
const endlessTicks = `{"args":{"count":100000000,"ms":20}}`

// accepted is the 202 of an asynchronous run.
type acceptedReply struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Links  struct {
		Run, Events, Cancel string
	} `json:"links"`
}

// startAsync POSTs an asynchronous run and wants 202.
func startAsync(t testing.TB, base, path, body string, header ...string) acceptedReply {
	t.Helper()
	r := post(t, base+path+"?async=true", body, header...)
	if r.status != http.StatusAccepted {
		t.Fatalf("async run: %s", r)
	}
	var a acceptedReply
	r.decode(t, &a)
	if !strings.HasPrefix(a.RunID, "run_") || a.Status != "running" {
		t.Fatalf("202 body %s", r.body)
	}
	if a.Links.Run != "/v1/runs/"+a.RunID || a.Links.Events != a.Links.Run+"/events" || a.Links.Cancel != a.Links.Run+"/cancel" {
		t.Errorf("links %+v", a.Links)
	}
	if loc := r.header.Get("Location"); loc != a.Links.Run {
		t.Errorf("Location %q, want %q", loc, a.Links.Run)
	}
	return a
}

// watch reads GET url (the events of a run) to its end, with header, and returns its events.
func watch(t testing.TB, url string, header ...string) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	resp := openEvents(t, ctx, url, header...)
	defer resp.Body.Close()
	var evs []sseEvent
	if err := readSSE(t, resp.Body, func(e sseEvent) bool { evs = append(evs, e); return true }); err != nil {
		t.Fatalf("reading %s: %v", url, err)
	}
	return evs
}

// openEvents GETs url as an event stream and wants 200 text/event-stream (body unread).
func openEvents(t testing.TB, ctx context.Context, url string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp
}

// sequence is evs as "id:name[:status]" strings.
func sequence(evs []sseEvent) []string {
	var seq []string
	for _, e := range evs {
		s := e.id + ":" + e.name
		if e.ev.Status != "" {
			s += ":" + e.ev.Status
		}
		seq = append(seq, s)
	}
	return seq
}

// lastResult is the result of the last event of evs, which must be the result event.
func lastResult(t testing.TB, evs []sseEvent) *run.Result {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].name != "result" || evs[len(evs)-1].ev.Result == nil {
		t.Fatalf("the stream does not end with its result: %v", sequence(evs))
	}
	return evs[len(evs)-1].ev.Result
}

// An asynchronous run answers 202 once admitted, on each run route; its events then stream,
// numbered from 1, to its result.
func TestAsyncRunThenEvents(t *testing.T) {
	t.Parallel()
	env := liveEnv(t, Options{}, runtime.Config{})
	for _, tc := range []struct{ name, path, body string }{
		{"skill route", "/v1/skills/ticker/runs", `{"args":{"count":3,"ms":5}}`},
		{"runs route", "/v1/runs", `{"skill":"ticker","input":{"count":3,"ms":5}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAsync(t, env.ts.URL, tc.path, tc.body)
			evs := watch(t, env.ts.URL+a.Links.Events)
			want := "1:status:started,2:status:running,3:log,4:log,5:log,6:result"
			if got := strings.Join(sequence(evs), ","); got != want {
				t.Fatalf("events %s, want %s", got, want)
			}
			res := lastResult(t, evs)
			if !res.Success || res.RunID != a.RunID || len(res.Logs) != 3 {
				t.Errorf("result %+v", res)
			}
			for _, e := range evs {
				if e.ev.RunID != a.RunID {
					t.Errorf("event %s names run %q", e.id, e.ev.RunID)
				}
			}
			// The run is a resource like any other: GET /v1/runs/{id} has it.
			if r := get(t, env.ts.URL+a.Links.Run); r.status != 200 {
				t.Errorf("GET the run: %s", r)
			}
		})
	}
}

// What the runtime refuses before a run is admitted answers an asynchronous request exactly as
// it answers a synchronous one; a bad async value is a 400 that names it.
func TestAsyncRefusalsAnswerAsSync(t *testing.T) {
	t.Parallel()
	env := liveEnv(t, Options{}, runtime.Config{Shared: testengine.Shared(t, runtime.SharedConfig{Admission: runtime.Admission{MaxRuns: 1, MaxWait: 50 * time.Millisecond}})})
	tests := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"no such skill", "/v1/skills/nope/runs", `{}`, 404, "not_found"},
		{"no such skill, runs route", "/v1/runs", `{"skill":"nope"}`, 404, "not_found"},
		{"no such script", "/v1/skills/nope/scripts/x.py/runs", `{}`, 404, "not_found"},
		{"invalid arguments", "/v1/skills/strict/runs", `{"args":{"n":"x"}}`, 422, "invalid_args"},
		{"bad body", "/v1/skills/echo/runs", `{"argz":{}}`, 400, "bad_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sync := post(t, env.ts.URL+tc.path, tc.body)
			async := post(t, env.ts.URL+tc.path+"?async=true", tc.body)
			wantError(t, sync, tc.status, tc.code)
			wantError(t, async, tc.status, tc.code)
			if string(sync.body) != string(async.body) {
				t.Errorf("sync answered %s, async %s", sync.body, async.body)
			}
		})
	}
	for _, q := range []string{"async=yes", "async=1", "async=", "async=true&async=true"} {
		r := post(t, env.ts.URL+"/v1/skills/echo/runs?"+q, `{}`)
		if e := wantError(t, r, 400, "bad_request"); !strings.Contains(e.Error.Message, "async") {
			t.Errorf("%s: message %q does not name async", q, e.Error.Message)
		}
	}
	if r := post(t, env.ts.URL+"/v1/skills/echo/runs?async=false", `{"args":{"a":1}}`); r.status != 200 {
		t.Errorf("async=false is a synchronous run: %s", r)
	}

	// Busy: the one run slot taken, the next waits 50ms and is refused, sync and async alike.
	long := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", endlessTicks)
	for _, q := range []string{"", "?async=true"} {
		r := post(t, env.ts.URL+"/v1/skills/echo/runs"+q, `{}`)
		wantError(t, r, 429, "busy")
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%q: 429 without Retry-After", q)
		}
	}
	if r := post(t, env.ts.URL+long.Links.Cancel, ``); r.status != 202 {
		t.Fatalf("cancel: %s", r)
	}
	watch(t, env.ts.URL+long.Links.Events)

	// Closing: 503 both ways.
	env.rt.Close(context.Background())
	for _, q := range []string{"", "?async=true"} {
		wantError(t, post(t, env.ts.URL+"/v1/skills/echo/runs"+q, `{}`), 503, "unavailable")
	}
}

// Past MaxAsync asynchronous runs in flight, another is 429 with Retry-After; a run that ends
// gives its place back. Synchronous runs are not counted.
func TestAsyncBound(t *testing.T) {
	t.Parallel()
	env := liveEnv(t, Options{LiveRuns: LiveRunOptions{MaxAsync: 1}}, runtime.Config{})
	first := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", endlessTicks)
	r := post(t, env.ts.URL+"/v1/skills/echo/runs?async=true", `{}`)
	if e := wantError(t, r, 429, "busy"); !strings.Contains(e.Error.Message, "1 asynchronous runs") {
		t.Errorf("message %q", e.Error.Message)
	}
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if r := post(t, env.ts.URL+"/v1/skills/echo/runs", `{}`); r.status != 200 {
		t.Errorf("a synchronous run beside it: %s", r)
	}
	if r := post(t, env.ts.URL+first.Links.Cancel, ``); r.status != 202 {
		t.Fatalf("cancel: %s", r)
	}
	watch(t, env.ts.URL+first.Links.Events)
	if !waitFor(hangGuard, func() bool { _, n := env.srv.def.live.inFlight(); return n == 0 }) {
		t.Fatal("the canceled run kept its place")
	}
	startAsync(t, env.ts.URL, "/v1/skills/echo/runs", `{}`)
}

// A client that goes away while its asynchronous run waits for admission cancels it: nobody
// could learn its id. The place it took comes back.
func TestAsyncClientGoneBeforeAdmission(t *testing.T) {
	t.Parallel()
	// MaxWait is long: the queued run must still be waiting when its client leaves, however
	// slow the machine; only the client's leaving ends its wait.
	env := liveEnv(t, Options{}, runtime.Config{Shared: testengine.Shared(t, runtime.SharedConfig{Admission: runtime.Admission{MaxRuns: 1, MaxWait: 10 * time.Minute}})})
	long := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", endlessTicks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", env.ts.URL+"/v1/skills/echo/runs?async=true", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	answered := make(chan string, 1) // what the client got: "" when it left without an answer
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- ""
			return
		}
		resp.Body.Close()
		answered <- fmt.Sprintf("the queued request answered %d", resp.StatusCode)
	}()
	// The client leaves once its run holds a place and waits in the admission queue.
	if !waitFor(hangGuard, func() bool {
		_, n := env.srv.def.live.inFlight()
		return len(answered) > 0 || (n == 2 && env.rt.Stats().Admission.Queued == 1)
	}) {
		t.Fatalf("the second run never waited for admission: %+v", env.rt.Stats().Admission)
	}
	cancel()
	if got := <-answered; got != "" {
		t.Fatal(got)
	}
	if !waitFor(hangGuard, func() bool { _, n := env.srv.def.live.inFlight(); return n == 1 }) {
		t.Error("the queued run kept its place after its client left")
	}
	post(t, env.ts.URL+long.Links.Cancel, ``)
	watch(t, env.ts.URL+long.Links.Events)
	if !waitFor(hangGuard, func() bool { return env.rt.Stats().Admission.Running == 0 }) {
		t.Errorf("runs still admitted: %+v", env.rt.Stats().Admission)
	}
}

// Mounted under a prefix, the links of an asynchronous run carry it, and they work.
func TestAsyncLinksUnderAPrefix(t *testing.T) {
	t.Parallel()
	ts := userApp(t, Options{})
	a := post(t, ts.URL+"/skills/v1/skills/echo/runs?async=true", `{"args":{"n":1}}`)
	var acc acceptedReply
	a.decode(t, &acc)
	if a.status != 202 || acc.Links.Events != "/skills/v1/runs/"+acc.RunID+"/events" {
		t.Fatalf("%s", a)
	}
	if res := lastResult(t, watch(t, ts.URL+acc.Links.Events)); !res.Success {
		t.Errorf("result %+v", res)
	}
}
