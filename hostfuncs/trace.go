package hostfuncs

import (
	"context"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the fetch spans.
const TracerName = "github.com/skillbox-dev/skillbox/hostfuncs"

// The fetch span's attributes beyond the HTTP client conventions (docs/observability.md).
const (
	attrFetchStatus = attribute.Key("skillbox.fetch.status")
	attrDenied      = attribute.Key("skillbox.fetch.denied")
)

// fetchSpan is the span of one fetch: an HTTP client span, a child of the run's span in the
// fetch's context, from the tracer provider of that span (none when the run is not traced).
// It names the request's method and host, never its path, query or credentials: those are the
// guest's, and may hold a token.
type fetchSpan struct {
	trace.Span
	code     int // the response's status, once there is one
	bytesOut int // the request body's size, once sent
}

func startFetch(ctx context.Context) (context.Context, *fetchSpan) {
	parent := trace.SpanFromContext(ctx)
	ctx, span := parent.TracerProvider().Tracer(TracerName, trace.WithSchemaURL(semconv.SchemaURL)).
		Start(ctx, "fetch", trace.WithSpanKind(trace.SpanKindClient))
	return ctx, &fetchSpan{Span: span}
}

// target records what the request goes to, once its URL is checked well-formed.
func (s *fetchSpan) target(method string, u *url.URL) {
	if !s.IsRecording() {
		return
	}
	s.SetName(method) // HTTP client spans are named by the method alone
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(method),
		semconv.URLSchemeKey.String(u.Scheme), semconv.ServerAddressKey.String(u.Hostname())}
	if p, err := strconv.Atoi(portOf(u)); err == nil {
		attrs = append(attrs, semconv.ServerPortKey.Int(p))
	}
	s.SetAttributes(attrs...)
}

// deny records why the grant refused the request: the operator's words (they may name a blocked
// address), not the guest's.
func (s *fetchSpan) deny(reason string) {
	if s.IsRecording() {
		s.SetAttributes(attrDenied.String(reason))
	}
}

// end records how the fetch ended (the response, or the refusal the guest got) and ends the span.
func (s *fetchSpan) end(resp *FetchResponse, err error) {
	if !s.IsRecording() {
		s.End()
		return
	}
	status, _ := StatusOf(err)
	attrs := []attribute.KeyValue{attrFetchStatus.String(status.String())}
	if s.bytesOut > 0 {
		attrs = append(attrs, semconv.HTTPRequestBodySizeKey.Int(s.bytesOut))
	}
	if s.code != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCodeKey.Int(s.code))
	}
	if resp != nil {
		attrs = append(attrs, semconv.HTTPResponseBodySizeKey.Int(len(resp.Body)))
	}
	switch {
	case err != nil:
		attrs = append(attrs, semconv.ErrorTypeKey.String(status.String()))
		s.SetStatus(codes.Error, status.String())
	case s.code >= 400:
		attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(s.code)))
		s.SetStatus(codes.Error, "")
	}
	s.SetAttributes(attrs...)
	s.End()
}
