package server

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/skillbox-dev/skillbox/runtime"
)

// A run's span continues the trace of the request's W3C headers (traceparent, tracestate), in
// JSON and in SSE, and through a tool call; a request without them, or with a malformed one, starts a trace of its own.
func TestRunContinuesTheCallersTrace(t *testing.T) {
	t.Parallel()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	env := watEnvRuntime(t, Options{}, runtime.Config{TracerProvider: tp}, 100)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	traceparent := "00-" + traceID + "-" + parentID + "-01"
	last := func() sdktrace.ReadOnlySpan {
		t.Helper()
		ended := sr.Ended()
		if len(ended) == 0 || ended[len(ended)-1].Name() != "execute_tool hello" {
			t.Fatalf("spans: %v", ended)
		}
		return ended[len(ended)-1]
	}
	tests := []struct {
		name    string
		headers []string
		parent  string // "" for a trace of its own
	}{
		{"json", []string{"Traceparent", traceparent, "Tracestate", "congo=t61rcWkgMzE"}, parentID},
		{"sse", []string{"Traceparent", traceparent, "Accept", "text/event-stream"}, parentID},
		{"runs route", []string{"Traceparent", traceparent}, parentID},
		{"tool call", []string{"Traceparent", traceparent}, parentID},
		{"no traceparent", nil, ""},
		{"malformed traceparent", []string{"Traceparent", "00-" + traceID + "-zz-01"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, body := "/v1/skills/hello/runs", `{}`
			switch tc.name {
			case "runs route":
				path, body = "/v1/runs", `{"skill":"hello"}`
			case "tool call":
				path, body = "/v1/tools/call", `{"name":"run_skill","arguments":{"skill":"hello"}}`
			}
			r := send(t, "POST", env.ts.URL+path, strings.NewReader(body), append([]string{"Content-Type", "application/json"}, tc.headers...)...)
			if r.status != 200 || !strings.Contains(string(r.body), "greeting") {
				t.Fatalf("run: %s", r)
			}
			s := last()
			if tc.parent == "" {
				if s.Parent().IsValid() {
					t.Fatalf("parent %v, want none", s.Parent())
				}
				return
			}
			if s.SpanContext().TraceID().String() != traceID || s.Parent().SpanID().String() != tc.parent || !s.Parent().IsRemote() {
				t.Fatalf("span %v, parent %v", s.SpanContext(), s.Parent())
			}
			if tc.name == "json" && s.Parent().TraceState().String() != "congo=t61rcWkgMzE" {
				t.Fatalf("tracestate %q", s.Parent().TraceState())
			}
			// The run's result and record name its trace, for whoever reads it later.
			if tc.name == "json" {
				res := runResult(t, r)
				rec := get(t, env.ts.URL+"/v1/runs/"+res.RunID).object(t)
				if res.TraceID != traceID || rec["trace_id"] != traceID {
					t.Errorf("trace id: result %q, record %v; want %s", res.TraceID, rec["trace_id"], traceID)
				}
			}
		})
	}
}
