package telemetry

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
)

const (
	parentA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	parentB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

func TestFromMeta(t *testing.T) {
	t.Parallel()
	fromHeader := FromHTTP(context.Background(), http.Header{"Traceparent": {parentB}})
	tests := []struct {
		name  string
		ctx   context.Context
		meta  map[string]any
		trace string // the trace id ctx ends with, "" for none
		bag   string // baggage member "k"'s value
	}{
		{"traceparent, tracestate and baggage", context.Background(),
			map[string]any{"traceparent": parentA, "tracestate": "rojo=1", "baggage": "k=v"}, "4bf92f3577b34da6a3ce929d0e0e4736", "v"},
		{"_meta wins over the HTTP request's", fromHeader, map[string]any{"traceparent": parentA}, "4bf92f3577b34da6a3ce929d0e0e4736", ""},
		{"no _meta keeps the HTTP request's", fromHeader, nil, "0af7651916cd43dd8448eb211c80319c", ""},
		{"a malformed one keeps the HTTP request's", fromHeader, map[string]any{"traceparent": "00-xyz"}, "0af7651916cd43dd8448eb211c80319c", ""},
		{"not a string", context.Background(), map[string]any{"traceparent": map[string]any{"a": 1}}, "", ""},
		{"too long", context.Background(), map[string]any{"traceparent": parentA + strings.Repeat(" ", maxMetaValue)}, "", ""},
		{"baggage too long is ignored", context.Background(), map[string]any{"traceparent": parentA, "baggage": "k=" + strings.Repeat("v", maxMetaValue)}, "4bf92f3577b34da6a3ce929d0e0e4736", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := FromMeta(tc.ctx, tc.meta)
			sc := trace.SpanContextFromContext(ctx)
			if tc.trace == "" {
				if sc.IsValid() {
					t.Fatalf("span context %v, want none", sc)
				}
				return
			}
			if sc.TraceID().String() != tc.trace || !sc.IsRemote() {
				t.Fatalf("span context %v, want trace %s", sc, tc.trace)
			}
			if got := baggage.FromContext(ctx).Member("k").Value(); got != tc.bag {
				t.Fatalf("baggage k=%q, want %q", got, tc.bag)
			}
			if tc.meta["tracestate"] != nil && sc.TraceState().String() != tc.meta["tracestate"] {
				t.Fatalf("tracestate %q", sc.TraceState())
			}
		})
	}
}
