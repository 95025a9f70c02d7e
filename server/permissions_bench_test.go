package server

import (
	"context"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/policy"
)

// BenchmarkPermissionRequestEvent measures how long a person watching a run over HTTP waits for
// its question: from the moment the runtime takes up a refused call (the request's asked_at) to
// the moment the permission_request event is read from the run's stream, over loopback; the
// answer then goes back by POST. Interleaved with an async run of the same skill whose host is
// not askable (refused at once), watched to its result. Reported: "event-ms", the median wait,
// and "x-refused", how much longer the asked run takes, answer included.
//
//	go test -run '^$' -bench PermissionRequestEvent -benchtime 200x ./server/
func BenchmarkPermissionRequestEvent(b *testing.B) {
	env, upstream := askEnv(b, nil, policy.Ask{Network: []string{"127.0.0.1"}})
	var waits []float64
	watch := func(body string, onRequest bool) func() {
		return func() {
			a := startAsync(b, env.ts.URL, "/v1/skills/asker/runs", body)
			resp := openEvents(b, context.Background(), env.ts.URL+a.Links.Events)
			defer resp.Body.Close()
			done := false
			if err := readSSE(b, resp.Body, func(e sseEvent) bool {
				if q := e.ev.Permission; q != nil && onRequest {
					waits = append(waits, float64(time.Since(q.AskedAt).Microseconds())/1000)
					if r := post(b, env.ts.URL+"/v1/runs/"+a.RunID+"/permission-requests/"+q.ID, `{"decision":"once"}`); r.status != 200 {
						b.Fatalf("answer: %s", r)
					}
				}
				done = e.ev.Result != nil
				return !done
			}); err != nil || !done {
				b.Fatalf("the stream ended without the result: %v", err)
			}
		}
	}
	p50 := interleave.Run(b,
		interleave.Contender{Name: "asked", F: watch(`{"args":{"url":"`+upstream+`"}}`, true)},
		interleave.Contender{Name: "refused", F: watch(`{"args":{"url":"http://127.0.0.2:1/"}}`, false)})
	interleave.Medians(b, "event-ms", map[string][]float64{"request": waits[2:]})
	b.ReportMetric(p50["asked"]/p50["refused"], "x-refused")
}
