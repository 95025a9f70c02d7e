// Package telemetry is how the faces continue a caller's trace: the HTTP server from the
// request's headers, the MCP server from a request's _meta. Each puts the caller's span context
// (and baggage) in the request's context, and the runtime's run span is its child.
//
// The format is W3C Trace Context plus W3C Baggage, whatever the process's global propagator:
// the library sets and reads nothing process-wide.
package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// Propagator reads (and writes) W3C traceparent, tracestate and baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(
	propagation.TraceContext{}, propagation.Baggage{})

// FromHTTP returns ctx carrying the trace context of h: traceparent, tracestate and baggage.
// Without a valid traceparent ctx keeps the span context it has.
func FromHTTP(ctx context.Context, h http.Header) context.Context {
	return Propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// FromMeta returns ctx carrying the trace context of an MCP request's _meta, whose keys are
// the HTTP headers' names ("traceparent", "tracestate", "baggage") with string values, as the
// OpenTelemetry conventions for MCP put them. A valid traceparent there wins over the span
// context ctx has (an HTTP request's, over streamable HTTP): one HTTP request may carry several
// MCP requests, and the _meta one names the caller of this one.
func FromMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return Propagator.Extract(ctx, metaCarrier(meta))
}

// maxMetaValue bounds a _meta value read as trace context: a traceparent is 55 bytes, and the
// W3C limits tracestate to 32 members and baggage to 8192 bytes.
const maxMetaValue = 8 << 10

// metaCarrier reads trace context from an MCP _meta: only string values, of bounded size.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, ok := m[key].(string)
	if !ok || len(s) > maxMetaValue {
		return ""
	}
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
