package runtime

import (
	"context"

	"github.com/skillbox-dev/skillbox/run"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracerName is the instrumentation scope of the run spans.
const TracerName = "github.com/skillbox-dev/skillbox/runtime"

// The run span's name and attributes (docs/observability.md). Where OpenTelemetry's semantic
// conventions for a tool execution fit, they are used: the span is "execute_tool <skill id>"
// with gen_ai.operation.name, gen_ai.tool.name and error.type; the rest is skillbox.*.
const (
	runSpanName = "execute_tool"

	attrSkillVersion = attribute.Key("skillbox.skill.version")
	attrSkillDigest  = attribute.Key("skillbox.skill.digest")
	attrRunID        = attribute.Key("skillbox.run.id")
	attrFace         = attribute.Key("skillbox.run.face")
	attrCaller       = attribute.Key("skillbox.run.caller")
	attrOutcome      = attribute.Key("skillbox.run.outcome")
	attrAdmitted     = attribute.Key("skillbox.run.admitted")
	attrDurationMs   = attribute.Key("skillbox.run.duration_ms")
	attrLogsDropped  = attribute.Key("skillbox.run.logs_dropped")
	attrPeakMemory   = attribute.Key("skillbox.usage.peak_memory_bytes")
	attrFetches      = attribute.Key("skillbox.usage.fetches")
	attrBytesIn      = attribute.Key("skillbox.usage.bytes_in")
	attrBytesOut     = attribute.Key("skillbox.usage.bytes_out")
	attrBytesWritten = attribute.Key("skillbox.usage.bytes_written")
	attrHosts        = attribute.Key("skillbox.usage.hosts_contacted")
	attrFilesRead    = attribute.Key("skillbox.usage.files_read")
	attrFilesWritten = attribute.Key("skillbox.usage.files_written")
	attrDenied       = attribute.Key("skillbox.usage.denied")
)

// maxSkillAttr bounds the skill id a span carries: a refused request's id is whatever the client
// sent, and valid ids are at most 63 bytes.
const maxSkillAttr = 128

// offSpan is the span of a run when tracing is off: a shared value, so a run without a
// TracerProvider allocates nothing for tracing.
var offSpan trace.Span = noop.Span{}

// newTracer returns the tracer of tp, or nil (tracing off) for a nil tp.
func newTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(TracerName, trace.WithSchemaURL(semconv.SchemaURL))
}

// startRun starts the span of a run of skill: a child of the span in ctx, or of traceParent (a
// W3C traceparent) when ctx has none. With tracing off the span is offSpan.
func (rt *Runtime) startRun(ctx context.Context, skill, traceParent string) (context.Context, trace.Span) {
	if traceParent != "" && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceParent})
	}
	if rt.tracer == nil {
		return ctx, offSpan
	}
	return rt.tracer.Start(ctx, runSpanName, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(capText(skill, maxSkillAttr))))
}

// endRun records how the run went on its span and ends it. known says the skill exists (the
// span is then named after it: a refused request's id could be anything, and span names must
// stay few).
func endRun(span trace.Span, res *run.Result, face run.Face, caller string, admitted, known bool) {
	if !span.IsRecording() {
		span.End()
		return
	}
	if known {
		span.SetName(runSpanName + " " + res.Skill)
	}
	u := &res.Usage
	attrs := []attribute.KeyValue{
		attrRunID.String(res.RunID),
		attrFace.String(string(face)),
		attrAdmitted.Bool(admitted),
		attrDurationMs.Float64(res.DurationMs),
		attrPeakMemory.Int64(int64(min(u.PeakMemoryBytes, 1<<62))),
		attrFetches.Int(u.Fetches),
		attrBytesIn.Int64(u.BytesIn),
		attrBytesOut.Int64(u.BytesOut),
		attrBytesWritten.Int64(u.BytesWritten),
		// Counts only: the denials and paths name what the guest chose (a URL with its query).
		attrFilesRead.Int(len(u.FilesRead)),
		attrFilesWritten.Int(len(u.FilesWritten)),
		attrDenied.Int(len(u.Denied)),
	}
	if len(u.HostsContacted) > 0 {
		attrs = append(attrs, attrHosts.StringSlice(u.HostsContacted))
	}
	if res.Version != "" {
		attrs = append(attrs, attrSkillVersion.String(res.Version))
	}
	if res.Digest != "" {
		attrs = append(attrs, attrSkillDigest.String(res.Digest))
	}
	if caller != "" {
		attrs = append(attrs, attrCaller.String(caller))
	}
	if res.LogsDropped > 0 {
		attrs = append(attrs, attrLogsDropped.Int(res.LogsDropped))
	}
	if res.Error != nil {
		kind := string(res.Error.Kind)
		attrs = append(attrs, attrOutcome.String(kind), semconv.ErrorTypeKey.String(kind))
		// The kind, not the message: a message can carry what the guest chose to say.
		span.SetStatus(codes.Error, kind)
	} else {
		attrs = append(attrs, attrOutcome.String("success"))
	}
	span.SetAttributes(attrs...)
	span.End()
}

// traceID is the trace a run belongs to, for its log line ("" when it has none).
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}
