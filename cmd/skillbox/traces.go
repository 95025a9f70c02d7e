package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Tracing is configured by the standard OpenTelemetry environment variables only
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
//
//   - OTEL_TRACES_EXPORTER: unset, empty or "none" traces nothing (the specification's default
//     is an OTLP exporter dialling localhost:4318: a CLI must not send anything anywhere
//     unasked); "console" prints each span as a line of JSON on standard error (never standard
//     output, which is a command's result, or the MCP stdio stream); "otlp" exports over OTLP,
//     configured by OTEL_EXPORTER_OTLP_* (endpoint, protocol, headers, timeout, compression).
//   - OTEL_SDK_DISABLED=true traces nothing, whatever the exporter.
//   - OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: the resource (service.name is "skillbox"
//     unless they say otherwise); OTEL_TRACES_SAMPLER(_ARG): the sampler (parent-based, always
//     on, by default); OTEL_BSP_*: the batching.
const tracesExporterEnv = "OTEL_TRACES_EXPORTER"

// flushTimeout bounds how long a command waits, on its way out, for its last spans to be sent.
const flushTimeout = 5 * time.Second

// startTracing sets e.tracer to the tracer provider the environment asks for (none by default)
// and returns the function that flushes and shuts it down, which the command defers: the spans
// of a `skillbox run` are sent before the process exits.
func (e *env) startTracing(ctx context.Context) (stop func(), err error) {
	name := strings.TrimSpace(os.Getenv(tracesExporterEnv))
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") || name == "" || name == "none" {
		return func() {}, nil
	}
	var exp sdktrace.SpanExporter
	switch name {
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(e.stderr))
	case "otlp":
		exp, err = otlpExporter(ctx)
	default:
		return nil, fmt.Errorf("traces: %s=%q is not an exporter skillbox has: use otlp, console or none", tracesExporterEnv, name)
	}
	if err != nil {
		return nil, fmt.Errorf("traces: %s=%s: %w (see OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_ENDPOINT)", tracesExporterEnv, name, err)
	}
	env, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("traces: OTEL_RESOURCE_ATTRIBUTES or OTEL_SERVICE_NAME: %w (write key=value pairs separated by commas, values percent-encoded)", err)
	}
	// The environment's attributes win over ours.
	res, err := resource.Merge(resource.NewSchemaless(attribute.String("service.name", "skillbox"),
		attribute.String("service.version", moduleVersion())), env)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("traces: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	e.tracer = tp
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			fmt.Fprintf(e.stderr, "skillbox: traces: sending the last spans: %s\n", clean(err.Error()))
		}
	}, nil
}

// otlpProtocolEnvs name the OTLP protocol, the traces' own variable first.
var otlpProtocolEnvs = []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}

// otlpExporter returns the OTLP span exporter for the protocol the environment names,
// http/protobuf (the specification's default) or grpc; the exporter reads the rest of
// OTEL_EXPORTER_OTLP_* itself.
//
// This is the choice the contrib autoexport package makes, written out: autoexport also links
// the metrics and logs exporters of every protocol and a Prometheus client, which a CLI that
// exports traces only never uses (about 90 packages more to compile and 3.4 MB of binary).
func otlpExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	for _, name := range otlpProtocolEnvs {
		switch proto := strings.TrimSpace(os.Getenv(name)); proto {
		case "":
			continue
		case "http/protobuf":
			return otlptracehttp.New(ctx)
		case "grpc":
			return otlptracegrpc.New(ctx)
		default:
			return nil, fmt.Errorf("%s=%q is not an OTLP protocol skillbox has: use http/protobuf or grpc", name, proto)
		}
	}
	return otlptracehttp.New(ctx)
}

// moduleVersion is skillbox's version: the one set at build time, the module's, or "(devel)".
func moduleVersion() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
