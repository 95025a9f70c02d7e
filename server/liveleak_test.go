package server

import (
	"bytes"
	"context"
	"net/http"
	goruntime "runtime"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime"
)

// Nothing the live runs start outlives them: after asynchronous runs (finished, canceled,
// refused, abandoned by their client before admission) and their watchers (reading, resuming,
// hanging up mid-stream) end, the goroutines come back to their baseline and none of this
// package's handlers is left. Not parallel: it counts every goroutine of the process.
func TestLiveRunsLeakNothing(t *testing.T) {
	env := liveEnv(t, Options{LiveRuns: LiveRunOptions{MaxAsync: 4}}, runtime.Config{})
	http.DefaultClient.CloseIdleConnections()
	settle := func(base int) bool {
		return waitFor(hangGuard, func() bool {
			http.DefaultClient.CloseIdleConnections()
			return goruntime.NumGoroutine() <= base+3 && !bytes.Contains(stacks(), []byte("server.(*Server).run"))
		})
	}
	base := goruntime.NumGoroutine()

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := post(t, env.ts.URL+"/v1/skills/ticker/runs?async=true", `{"args":{"count":20,"ms":5}}`)
			if r.status != 202 { // past MaxAsync: 429, nothing started
				wantError(t, r, 429, "busy")
				return
			}
			var a acceptedReply
			r.decode(t, &a)
			switch i % 3 {
			case 0:
				watch(t, env.ts.URL+a.Links.Events)
			case 1: // hang up after two events, resume, and cancel
				ctx, cancel := context.WithCancel(context.Background())
				resp := openEvents(t, ctx, env.ts.URL+a.Links.Events)
				n := 0
				readSSE(t, resp.Body, func(sseEvent) bool { n++; return n < 2 })
				cancel()
				resp.Body.Close()
				post(t, env.ts.URL+a.Links.Cancel, ``)
				watch(t, env.ts.URL+a.Links.Events, "Last-Event-ID", "2")
			default: // nobody watches
			}
		})
	}
	wg.Wait()
	if !waitFor(hangGuard, func() bool { tr, as := env.srv.def.live.inFlight(); return tr == 0 && as == 0 }) {
		t.Fatal("runs still in flight")
	}
	if !settle(base) {
		t.Errorf("leak: %d goroutines, baseline %d\n%s", goruntime.NumGoroutine(), base, stacks())
	}
}

// stacks is every goroutine's stack.
func stacks() []byte {
	buf := make([]byte, 1<<20)
	return buf[:goruntime.Stack(buf, true)]
}
