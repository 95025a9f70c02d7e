package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Two callers' trace contexts, as W3C traceparent values.
const (
	metaTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	metaParent  = "00f067aa0ba902b7"
	headerTrace = "0af7651916cd43dd8448eb211c80319c"
	headerSpan  = "b7ad6b7169203331"
)

func traceparent(traceID, spanID string) string { return "00-" + traceID + "-" + spanID + "-01" }

// tracedEnv is newEnv with a runtime whose spans sr records.
func tracedEnv(t *testing.T) (*env, *tracetest.SpanRecorder) {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return newEnvRuntime(t, mcpserver.Options{}, runtime.Config{TracerProvider: tp}), sr
}

// runSpan is the span of the last run of skill.
func runSpan(t *testing.T, sr *tracetest.SpanRecorder, skill string) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := sr.Ended()
	for i := len(ended) - 1; i >= 0; i-- {
		if ended[i].Name() == "execute_tool "+skill {
			return ended[i]
		}
	}
	t.Fatalf("no run span of %s among %d spans", skill, len(ended))
	return nil
}

// wantParent fails unless s continues the trace traceID from the remote span spanID (or, for
// "", starts a trace of its own).
func wantParent(t *testing.T, s sdktrace.ReadOnlySpan, traceID, spanID string) {
	t.Helper()
	if spanID == "" {
		if s.Parent().IsValid() {
			t.Fatalf("span %s has parent %v, want none", s.Name(), s.Parent())
		}
		return
	}
	if s.SpanContext().TraceID().String() != traceID || s.Parent().SpanID().String() != spanID || !s.Parent().IsRemote() {
		t.Fatalf("span %s: trace %s, parent %v; want trace %s, parent %s", s.Name(), s.SpanContext().TraceID(), s.Parent(), traceID, spanID)
	}
}

// A tools/call's _meta traceparent (and tracestate) is the parent of its run's span, for the
// skill's own tool and the toolset's run_skill alike; a call without one, or with a malformed
// one, starts a trace of its own.
func TestMCPMetaContinuesTheCallersTrace(t *testing.T) {
	t.Parallel()
	e, sr := tracedEnv(t)
	cs := e.connect(t, legacyProtocol, nil)
	ctx := testContext(t)
	meta := mcp.Meta{"traceparent": traceparent(metaTrace, metaParent), "tracestate": "rojo=00f067aa0ba902b7"}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "skill_echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	s := runSpan(t, sr, "echo")
	wantParent(t, s, metaTrace, metaParent)
	if got := s.Parent().TraceState().String(); got != "rojo=00f067aa0ba902b7" {
		t.Errorf("tracestate %q", got)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "run_skill", Arguments: map[string]any{"skill": "echo", "args": map[string]any{"text": "hi"}}})
	if err != nil || res.IsError {
		t.Fatalf("run_skill: %v %+v", err, res)
	}
	wantParent(t, runSpan(t, sr, "echo"), metaTrace, metaParent)

	for _, m := range []mcp.Meta{nil, {"traceparent": "00-not-a-trace-01"}, {"traceparent": 42}} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: m, Name: "skill_echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatal(err)
		}
		wantParent(t, runSpan(t, sr, "echo"), "", "")
	}
}

// headerTransport adds a traceparent to every request of an MCP client.
type headerTransport struct{ traceparent string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Traceparent", h.traceparent)
	return http.DefaultTransport.RoundTrip(r)
}

// Over streamable HTTP, a call's HTTP traceparent is its run's parent, unless the call's _meta
// names one: that one wins (one HTTP request may carry several MCP requests).
func TestMCPHTTPContinuesTheCallersTrace(t *testing.T) {
	t.Parallel()
	e, sr := tracedEnv(t)
	hs := httptest.NewServer(e.srv.Handler())
	defer hs.Close()
	ctx := testContext(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "skillbox-test", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: hs.URL,
		HTTPClient: &http.Client{Transport: headerTransport{traceparent(headerTrace, headerSpan)}}}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"text": "hi"}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_echo", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	wantParent(t, runSpan(t, sr, "echo"), headerTrace, headerSpan)
	meta := mcp.Meta{"traceparent": traceparent(metaTrace, metaParent)}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "skill_echo", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	wantParent(t, runSpan(t, sr, "echo"), metaTrace, metaParent)
}
