package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

// stream POSTs a run asking for server-sent events and returns the response (body unread).
func stream(t *testing.T, ctx context.Context, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestSSEEvents(t *testing.T) {
	t.Parallel()
	ts, _ := newTestServer(t, Options{})
	tests := []struct {
		name, path, body, accept string // given
		logs                     []string
		success                  bool
		kind                     run.ErrorKind
	}{
		{"bundled hello logs", "/v1/skills/hello/runs", `{"args":{"name":"Ada"}}`, "text/event-stream", []string{"greeting Ada"}, true, ""},
		{"runs route streams too", "/v1/runs", `{"skill":"hello","input":{"name":"Bo"}}`, "text/event-stream", []string{"greeting Bo"}, true, ""},
		{"one of several accepted types", "/v1/skills/hello/runs", `{}`, "application/json;q=0.5, text/event-stream", []string{"greeting world"}, true, ""},
		{"a failed run streams its failure", "/v1/skills/http-get/runs", `{"args":{"url":"https://denied.example.net/"}}`, "text/event-stream", nil, false, run.KindPermissionDenied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := stream(t, context.Background(), ts.URL+tc.path, tc.body, "Accept", tc.accept)
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("Cache-Control %q", cc)
			}
			var seq []string
			var logs []string
			var result *run.Result
			err := readSSE(t, resp.Body, func(e sseEvent) bool {
				if result != nil {
					t.Errorf("event %s after the result", e.name)
				}
				switch e.name {
				case "status":
					seq = append(seq, "status:"+e.ev.Status)
				case "log":
					seq = append(seq, "log")
					if e.ev.Log == nil {
						t.Errorf("log event without a log: %s", e.data)
					} else {
						logs = append(logs, e.ev.Log.Message)
					}
				case "result":
					seq = append(seq, "result")
					result = e.ev.Result
				default:
					t.Errorf("unknown event %q", e.name)
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if !eventOrder.MatchString(strings.Join(seq, ",")) {
				t.Errorf("events %v, want started, running, logs..., result", seq)
			}
			if len(tc.logs) > 0 && strings.Join(logs, "|") != strings.Join(tc.logs, "|") {
				t.Errorf("logs %q, want %q", logs, tc.logs)
			}
			if result == nil {
				t.Fatal("no result event")
			}
			if result.Success != tc.success || (tc.kind != "" && (result.Error == nil || result.Error.Kind != tc.kind)) {
				t.Errorf("result %+v", result)
			}
			// The streamed run is in the history like any other.
			if r := get(t, ts.URL+"/v1/runs/"+result.RunID); r.status != 200 {
				t.Errorf("history of a streamed run: %s", r)
			}
		})
	}
}

// eventOrder is the only order of a run's events.
var eventOrder = regexp.MustCompile(`^status:started,status:running(,log)*,result$`)

// Errors found before the run starts are plain JSON errors even when a stream was asked for: the
// stream has not begun, so the status code can still say what went wrong.
func TestSSEErrorsBeforeTheRunAreJSON(t *testing.T) {
	t.Parallel()
	env := runsEnv(t)
	tests := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"invalid arguments", "/v1/skills/echo/runs", `{"args":{"n":"x"}}`, 422, "invalid_args"},
		{"unknown skill", "/v1/skills/nope/runs", `{}`, 404, "not_found"},
		{"malformed body", "/v1/skills/echo/runs", `{`, 400, "bad_request"},
		{"too large", "/v1/skills/echo/runs", `{"args":{"p":"` + strings.Repeat("z", 2*envelopeBytes) + `"}}`, 413, "too_large"},
		{"arguments over the bound", "/v1/skills/echo/runs", `{"args":{"p":"` + strings.Repeat("z", 400) + `"}}`, 422, "invalid_args"},
		{"broken skill", "/v1/skills/broken/runs", `{}`, 409, "skill_broken"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := post(t, env.ts.URL+tc.path, tc.body, "Accept", "text/event-stream")
			wantError(t, r, tc.status, tc.code)
		})
	}
}

// A client that goes away mid-run cancels the run: it ends as canceled, not at its timeout
// (the loop never ends by itself), and the in-flight gauge returns to zero.
func TestSSEClientDisconnectCancelsRun(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 60000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := stream(t, ctx, env.ts.URL+"/v1/skills/loop/runs", `{}`)
	defer resp.Body.Close()
	sawRunning := false
	readSSE(t, resp.Body, func(e sseEvent) bool {
		if e.ev.Status == "running" {
			sawRunning = true
			if v, _ := metricValue(metricsText(t, env.ts.URL), "skillbox_runs_in_flight"); v != 1 {
				t.Errorf("in flight while running: %v, want 1", v)
			}
			return false
		}
		return true
	})
	if !sawRunning {
		t.Fatal("no running event")
	}
	cancel()
	// A run that ran to its timeout would count as outcome="timeout": canceled says the client's
	// leaving ended it.
	var text string
	ok := waitFor(hangGuard, func() bool {
		text = metricsText(t, env.ts.URL)
		v, _ := metricValue(text, `skillbox_runs_total{skill="loop",face="http",outcome="canceled"}`)
		f, _ := metricValue(text, "skillbox_runs_in_flight")
		return v == 1 && f == 0
	})
	if !ok {
		t.Fatalf("the run was not canceled:\n%s", text)
	}
}

// The same without a stream: a JSON client that gives up on its run (its context ends while the
// run is in flight) cancels it.
func TestSyncClientDisconnectCancelsRun(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 60000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", env.ts.URL+"/v1/skills/loop/runs", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	answered := make(chan string, 1) // what the client got: "" when it gave up without an answer
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- ""
			return
		}
		resp.Body.Close()
		answered <- fmt.Sprintf("the loop answered %d before its client gave up", resp.StatusCode)
	}()
	// The client gives up once the run is in flight (not while its request is still on the way).
	var text string
	if !waitFor(hangGuard, func() bool {
		text = metricsText(t, env.ts.URL)
		f, _ := metricValue(text, "skillbox_runs_in_flight")
		return len(answered) > 0 || f == 1
	}) {
		t.Fatalf("the run never started:\n%s", text)
	}
	cancel()
	if got := <-answered; got != "" {
		t.Fatal(got)
	}
	if !waitFor(hangGuard, func() bool {
		text = metricsText(t, env.ts.URL)
		v, _ := metricValue(text, `skillbox_runs_total{skill="loop",face="http",outcome="canceled"}`)
		f, _ := metricValue(text, "skillbox_runs_in_flight")
		return v == 1 && f == 0
	}) {
		t.Fatalf("not canceled:\n%s", text)
	}
}
