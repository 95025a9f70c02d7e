package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/runtime"
)

// A client that stopped mid-stream resumes after the last event it had, with Last-Event-ID or
// ?after=, and gets exactly the rest: together, the same events as one uninterrupted read.
func TestEventsResume(t *testing.T) {
	t.Parallel()
	env := liveEnv(t, Options{}, runtime.Config{})
	a := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", `{"args":{"count":6,"ms":40}}`)
	url := env.ts.URL + a.Links.Events

	// Read the first three events live, then hang up.
	ctx, cancel := context.WithCancel(context.Background())
	resp := openEvents(t, ctx, url)
	var head []sseEvent
	readSSE(t, resp.Body, func(e sseEvent) bool { head = append(head, e); return len(head) < 3 })
	cancel()
	resp.Body.Close()
	if len(head) != 3 || head[2].id != "3" {
		t.Fatalf("first events %v", sequence(head))
	}

	whole := strings.Join(sequence(watch(t, url)), ",")
	for _, how := range [][]string{{"Last-Event-ID", "3"}, {"after", "3"}, {"Last-Event-ID", "3", "after", "1"}} {
		u, header := url, []string{}
		for i := 0; i < len(how); i += 2 {
			if how[i] == "after" {
				u += "?after=" + how[i+1]
			} else {
				header = append(header, how[i], how[i+1])
			}
		}
		rest := watch(t, u, header...)
		if got := strings.Join(sequence(append(append([]sseEvent{}, head...), rest...)), ","); got != whole {
			t.Errorf("%v: head and rest are %s, want %s", how, got, whole)
		}
	}
	// After the last event there is nothing more: the stream ends at once.
	n := strings.Count(whole, ",") + 1
	if rest := watch(t, url, "Last-Event-ID", strconv.Itoa(n)); len(rest) != 0 {
		t.Errorf("after the result: %v", sequence(rest))
	}
	for _, bad := range [][]string{{"Last-Event-ID", "x"}, {"Last-Event-ID", "-1"}, {"after", "2.5"}, {"after", "1&after=2"}} {
		var r reply
		if bad[0] == "after" {
			r = get(t, url+"?after="+bad[1])
		} else {
			r = get(t, url, bad[0], bad[1])
		}
		if e := wantError(t, r, 400, "bad_request"); !strings.Contains(e.Error.Message, bad[0]) {
			t.Errorf("%v: message %q does not name %s", bad, e.Error.Message, bad[0])
		}
	}
}

// A second client watches a synchronous run in flight, which streams to its own client too.
func TestEventsOfASynchronousRun(t *testing.T) {
	t.Parallel()
	env := liveEnv(t, Options{}, runtime.Config{})
	resp := stream(t, context.Background(), env.ts.URL+"/v1/skills/ticker/runs", `{"args":{"count":5,"ms":40}}`)
	defer resp.Body.Close()
	var own []sseEvent
	var watched []sseEvent
	readSSE(t, resp.Body, func(e sseEvent) bool {
		own = append(own, e)
		if len(own) == 1 { // started: the run id is known, the run in flight
			watched = watch(t, env.ts.URL+"/v1/runs/"+e.ev.RunID+"/events")
		}
		return true
	})
	if got, want := len(watched), len(own); got != want || got != 8 {
		t.Errorf("the watcher saw %d events, the run's client %d; want 8", got, want)
	}
	if res := lastResult(t, watched); !res.Success {
		t.Errorf("result %+v", res)
	}
}

// Past MaxEvents (or MaxEventBytes) a run's further logs are dropped, marked once; status and
// result events are always kept, and the result has every log the runtime kept.
func TestEventsBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts LiveRunOptions
		logs int
	}{
		{"by count", LiveRunOptions{MaxEvents: 3}, 3},
		// the two status events cost 96 each; each log 96+4+len(source)+len(level)
		{"by bytes", LiveRunOptions{MaxEventBytes: 192 + 2*120}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := liveEnv(t, Options{LiveRuns: tc.opts}, runtime.Config{})
			a := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", `{"args":{"count":10,"ms":0}}`)
			evs := watch(t, env.ts.URL+a.Links.Events)
			want := "1:status:started,2:status:running"
			for i := range tc.logs {
				want += "," + strconv.Itoa(3+i) + ":log"
			}
			want += "," + strconv.Itoa(3+tc.logs) + ":dropped," + strconv.Itoa(4+tc.logs) + ":result"
			if got := strings.Join(sequence(evs), ","); got != want {
				t.Fatalf("events %s, want %s", got, want)
			}
			if msg := string(evs[len(evs)-2].data); !strings.Contains(msg, "not kept") {
				t.Errorf("dropped marker %s", msg)
			}
			if res := lastResult(t, evs); len(res.Logs) != 10 {
				t.Errorf("the result has %d logs, want 10", len(res.Logs))
			}
		})
	}
}

// Finished runs' events go after Keep, or past MaxFinished: the events endpoint then answers
// the result the runtime still holds, as one event, and 404 saying why once that is gone too.
func TestEventsExpire(t *testing.T) {
	t.Parallel()
	// The registry's clock moves only when the test moves it: a loaded machine cannot expire
	// the kept run early.
	var elapsed atomic.Int64
	start := time.Now()
	clock := func() time.Time { return start.Add(time.Duration(elapsed.Load())) }
	env := liveEnv(t, Options{LiveRuns: LiveRunOptions{MaxFinished: 1, Keep: 300 * time.Millisecond, clock: clock}},
		runtime.Config{History: runtime.History{MaxRuns: 2}})
	run := func() string {
		a := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", `{"args":{"count":2,"ms":0}}`)
		if evs := watch(t, env.ts.URL+a.Links.Events); len(evs) != 5 {
			t.Fatalf("events %v", sequence(evs))
		}
		return a.RunID
	}
	first, second := run(), run()
	// MaxFinished 1: the first one's events went when the second finished; its result stays.
	evs := watch(t, env.ts.URL+"/v1/runs/"+first+"/events")
	if got := strings.Join(sequence(evs), ","); got != ":result" || lastResult(t, evs).RunID != first {
		t.Errorf("expired run's events %s, want its result alone", got)
	}
	if evs := watch(t, env.ts.URL+"/v1/runs/"+second+"/events"); len(evs) != 5 {
		t.Errorf("the kept run's events: %v", sequence(evs))
	}
	// Keep: after 300ms the second's events go too.
	elapsed.Add(int64(400 * time.Millisecond))
	if evs := watch(t, env.ts.URL+"/v1/runs/"+second+"/events"); len(evs) != 1 {
		t.Errorf("after Keep: %v", sequence(evs))
	}
	env.srv.live.mu.Lock()
	kept := len(env.srv.live.runs)
	env.srv.live.mu.Unlock()
	if kept != 0 {
		t.Errorf("%d runs kept past Keep", kept)
	}
	// The runtime keeps 2 results: two more runs and the first is unknown.
	run()
	run()
	r := get(t, env.ts.URL+"/v1/runs/"+first+"/events")
	if e := wantError(t, r, 404, "not_found"); !strings.Contains(e.Error.Message, "another process") || !strings.Contains(e.Error.Message, "300ms") {
		t.Errorf("404 message %q", e.Error.Message)
	}
}

// A client that stops reading never holds the run: with the socket buffers between them made
// small, a watcher that reads nothing while the run logs 150 KB of events does not slow the run
// (a stream that fed the run's events straight to the socket would stall it for the write
// deadline, 10s, at the first full buffer).
func TestEventsSlowClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixture(t, dir, "ticker", manifestJSON("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":30000,"maxLogBytes":1048576}`), "ticker", nil)
	env := newEnvRuntime(t, Options{}, runtime.Config{}, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(env.srv.Handler())
	ts.Listener.Close()
	ts.Listener = smallBuffers{ln}
	ts.Start()
	defer ts.Close()

	a := startAsync(t, ts.URL, "/v1/skills/ticker/runs", `{"args":{"count":1000,"ms":2}}`)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", a.Links.Events, ts.Listener.Addr())
	// ...and never read.
	var rec runtime.Record
	if !waitFor(9*time.Second, func() bool { var ok bool; rec, ok = env.rt.RunRecord(a.RunID); return ok }) {
		t.Fatal("the run did not end while its watcher did not read")
	}
	if !rec.Success || rec.DurationMs > 8000 {
		t.Errorf("the run: success %v, %vms", rec.Success, rec.DurationMs)
	}
	t.Logf("1000 ticks 2ms apart took %.0fms with a watcher that does not read", rec.DurationMs)
	if tracked, async := env.srv.live.inFlight(); tracked != 0 || async != 0 {
		t.Errorf("%d tracked, %d async places taken", tracked, async)
	}
}

// smallBuffers gives each accepted connection a small send buffer, so a client that does not
// read fills it at once.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

func TestEventsNotFound(t *testing.T) {
	t.Parallel()
	env := liveEnv(t, Options{}, runtime.Config{})
	r := get(t, env.ts.URL+"/v1/runs/run_000000000000000000000000/events")
	if e := wantError(t, r, 404, "not_found"); !strings.Contains(e.Error.Message, "another process") {
		t.Errorf("message %q", e.Error.Message)
	}
	if r := send(t, http.MethodPost, env.ts.URL+"/v1/runs/x/events", nil); r.status != 405 {
		t.Errorf("POST events: %s", r)
	}
}
