package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/run"
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
	env.srv.def.live.mu.Lock()
	kept := len(env.srv.def.live.runs)
	env.srv.def.live.mu.Unlock()
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

// A client that stops reading never holds the run: while a watcher's connection takes no more
// bytes (its writes wait at a gate the test opens, whatever deadline the server sets), the run
// goes on logging, and ends (canceled: it would tick for weeks) with its places given back. A
// stream that fed the run's events straight to the socket would stall the run at the first
// write it could not finish. Once the gate opens, the watcher still gets its whole stream.
func TestEventsSlowClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixture(t, dir, "ticker", manifestJSON("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":60000,"maxLogBytes":16777216}`), "ticker", nil)
	// Every event is kept, so the kept events count the run's progress.
	env := newEnvRuntime(t, Options{LiveRuns: LiveRunOptions{MaxEvents: 1 << 20, MaxEventBytes: 1 << 30}}, runtime.Config{}, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The watcher's own server (the same handler), whose connections pass their first bytes and
	// then wait at the gate.
	g := newGate()
	ts := httptest.NewUnstartedServer(env.srv.Handler())
	ts.Listener.Close()
	ts.Listener = gatedListener{Listener: ln, g: g}
	ts.Start()
	defer ts.Close()
	defer g.let() // first: ts.Close waits for the watcher's handler

	a := startAsync(t, env.ts.URL, "/v1/skills/ticker/runs", `{"args":{"count":100000000,"ms":2}}`)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", a.Links.Events, ts.Listener.Addr())
	// ...and read nothing until the run has ended.
	select {
	case <-g.stuck:
	case <-time.After(hangGuard):
		t.Fatal("the watcher never wrote past the gate")
	}
	live := env.srv.def.live.get(a.RunID)
	if live == nil {
		t.Fatal("the run is not tracked")
	}
	kept := func() int { evs, _, _ := live.since(0); return len(evs) }
	stuckAt := kept()
	if !waitFor(hangGuard, func() bool { return kept() >= stuckAt+100 }) {
		t.Fatalf("the run stopped at %d events while its watcher was stuck (at %d)", kept(), stuckAt)
	}
	if r := post(t, env.ts.URL+a.Links.Cancel, ``); r.status != 202 {
		t.Fatalf("cancel: %s", r)
	}
	var rec history.Record
	if !waitFor(hangGuard, func() bool {
		var ok bool
		rec, ok = env.rt.RunRecord(access.Principal{Key: "ops", Role: access.RoleAdmin}, a.RunID)
		return ok
	}) {
		t.Fatal("the run did not end while its watcher was stuck")
	}
	if rec.Error == nil || rec.Error.Kind != run.KindCanceled {
		t.Errorf("the run: %+v, want canceled", rec.Error)
	}
	if !waitFor(hangGuard, func() bool { tracked, async := env.srv.def.live.inFlight(); return tracked == 0 && async == 0 }) {
		tracked, async := env.srv.def.live.inFlight()
		t.Errorf("%d tracked, %d async places taken", tracked, async)
	}
	t.Logf("the run logged %d events while its watcher was stuck after %d", kept(), stuckAt)
	// Let the watcher's writes through: it still has the whole stream, to the result.
	g.let()
	conn.SetReadDeadline(time.Now().Add(hangGuard))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []sseEvent
	if err := readSSE(t, resp.Body, func(e sseEvent) bool { evs = append(evs, e); return true }); err != nil {
		t.Fatalf("reading the stuck watcher's stream: %v", err)
	}
	if res := lastResult(t, evs); res.RunID != a.RunID || res.Error == nil || res.Error.Kind != run.KindCanceled || len(evs) != kept() {
		t.Errorf("the watcher's %d events (%d kept) end with %+v", len(evs), kept(), res)
	}
}

// gate holds the writes of a gatedListener's connections past their first gateAfter bytes: a
// client that stops reading, for as long as the test says.
type gate struct {
	open, stuck        chan struct{}
	openOnce, stuckOne sync.Once
}

const gateAfter = 2048

func newGate() *gate { return &gate{open: make(chan struct{}), stuck: make(chan struct{})} }

// let lets every write through, from now on.
func (g *gate) let() { g.openOnce.Do(func() { close(g.open) }) }

// wait blocks until the gate is open; the first write to wait closes stuck.
func (g *gate) wait() {
	g.stuckOne.Do(func() { close(g.stuck) })
	<-g.open
}

type gatedListener struct {
	net.Listener
	g *gate
}

func (l gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, g: l.g}, nil
}

type gatedConn struct {
	net.Conn
	g       *gate
	written atomic.Int64
}

func (c *gatedConn) Write(p []byte) (int, error) {
	n := 0
	if room := gateAfter - c.written.Load(); room > 0 {
		m, err := c.Conn.Write(p[:min(int64(len(p)), room)])
		n += m
		c.written.Add(int64(m))
		if err != nil || n == len(p) {
			return n, err
		}
	}
	c.g.wait()
	m, err := c.Conn.Write(p[n:])
	return n + m, err
}

// SetWriteDeadline is ignored: the gate, not a deadline, decides when a write goes through.
func (c *gatedConn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline sets only the read deadline, for the same reason.
func (c *gatedConn) SetDeadline(t time.Time) error { return c.Conn.SetReadDeadline(t) }

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
