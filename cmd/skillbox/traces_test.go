package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/skillbox-dev/skillbox/internal/syncbuf"
)

// otlpReceiver is an OTLP/HTTP trace receiver on loopback: it decodes each export request
// (protobuf, as the OTLP exporter sends it by default) and keeps its spans.
type otlpReceiver struct {
	URL      string
	mu       sync.Mutex
	requests int
	spans    []*tracepb.Span
	services []string // each span's resource's service.name
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces, application/x-protobuf", http.StatusBadRequest)
			return
		}
		var body io.Reader = http.MaxBytesReader(w, req.Body, 16<<20)
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = io.LimitReader(zr, 16<<20)
		}
		data, err := io.ReadAll(body)
		var export coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(data, &export)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.requests++
		for _, rs := range export.ResourceSpans {
			service := attrValue(rs.GetResource().GetAttributes(), "service.name").GetStringValue()
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.spans = append(r.spans, s)
					r.services = append(r.services, service)
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// span returns the first span named name and its service, or nil.
func (r *otlpReceiver) span(name string) (*tracepb.Span, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range r.spans {
		if s.Name == name {
			return s, r.services[i]
		}
	}
	return nil, ""
}

func (r *otlpReceiver) count() (requests, spans int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, len(r.spans)
}

func attrValue(kvs []*commonpb.KeyValue, key string) *commonpb.AnyValue {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// otelEnv is the process's environment without OTEL_* variables, plus env: what a child sees of
// tracing is what the test says.
func otelEnv(env ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// Tracing is configured by the OTEL_* environment only, off unless OTEL_TRACES_EXPORTER says
// otherwise: console prints spans on stderr (stdout stays the command's), otlp sends them to the
// endpoint, including the spans of a `skillbox run` that exits at once and of a `serve` that is
// stopped; an unknown exporter is a usage error that names the variable.
func TestTracesFromTheEnvironment(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	skills := t.TempDir()
	skillFixture(t, skills, "quick", manifest("quick", `"version":"1.2.3"`), "hello")
	runCLI := func(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--cache-dir", cacheDir, "--skills", skills}, args...)...)
		cmd.Env = otelEnv(env...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code = cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String(), errOut.String(), code
	}

	t.Run("console", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := runCLI(t, []string{"OTEL_TRACES_EXPORTER=console"}, "run", "quick", "--json")
		var res map[string]any
		if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res["success"] != true {
			t.Fatalf("exit %d, stdout must be the result alone:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		var span struct {
			Name       string
			Attributes []struct {
				Key   string
				Value struct{ Value any }
			}
		}
		found := false
		for _, line := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &span) == nil && span.Name == "execute_tool quick" {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("no span on stderr:\n%s", stderr)
		}
		attrs := map[string]any{}
		for _, a := range span.Attributes {
			attrs[a.Key] = a.Value.Value
		}
		if attrs["gen_ai.tool.name"] != "quick" || attrs["skillbox.skill.version"] != "1.2.3" ||
			attrs["skillbox.run.id"] != res["run_id"] || attrs["skillbox.run.face"] != "cli" || attrs["skillbox.run.outcome"] != "success" {
			t.Fatalf("span attributes %v, result %v", attrs, res)
		}
	})

	t.Run("otlp", func(t *testing.T) {
		t.Parallel()
		recv := newOTLPReceiver(t)
		_, stderr, code := runCLI(t, []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL,
			"OTEL_SERVICE_NAME=agent-backend", "OTEL_BSP_SCHEDULE_DELAY=60000"}, "run", "quick")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		// The batch would wait a minute: the span is there because the command flushed it.
		s, service := recv.span("execute_tool quick")
		if s == nil || service != "agent-backend" {
			t.Fatalf("span %v of service %q; stderr:\n%s", s, service, stderr)
		}
		if attrValue(s.Attributes, "gen_ai.tool.name").GetStringValue() != "quick" || s.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
			t.Fatalf("span %v", s)
		}
	})

	t.Run("off by default", func(t *testing.T) {
		t.Parallel()
		// An endpoint is configured, but no exporter: nothing is sent (the specification's
		// default exporter would be OTLP, sending there).
		recv := newOTLPReceiver(t)
		for _, env := range [][]string{{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL},
			{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_TRACES_EXPORTER=none"},
			{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_TRACES_EXPORTER=otlp", "OTEL_SDK_DISABLED=true"}} {
			if _, stderr, code := runCLI(t, env, "run", "quick"); code != 0 {
				t.Fatalf("%v: exit %d:\n%s", env, code, stderr)
			}
		}
		if requests, _ := recv.count(); requests != 0 {
			t.Fatalf("%d export requests with tracing off", requests)
		}
	})

	t.Run("unknown exporter", func(t *testing.T) {
		t.Parallel()
		_, stderr, code := runCLI(t, []string{"OTEL_TRACES_EXPORTER=jaeger"}, "run", "quick")
		if code != exitUsage || !strings.Contains(stderr, `OTEL_TRACES_EXPORTER="jaeger"`) || !strings.Contains(stderr, "otlp, console or none") {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
	})

	t.Run("otlp protocol", func(t *testing.T) {
		t.Parallel()
		// The traces' own variable wins over the general one, as the specification says.
		recv := newOTLPReceiver(t)
		_, stderr, code := runCLI(t, []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL,
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}, "run", "quick")
		if s, _ := recv.span("execute_tool quick"); code != 0 || s == nil {
			t.Fatalf("exit %d, span %v:\n%s", code, s, stderr)
		}
		// A protocol skillbox does not have is a usage error that names the variable.
		_, stderr, code = runCLI(t, []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}, "run", "quick")
		if code != exitUsage || !strings.Contains(stderr, `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`) || !strings.Contains(stderr, "http/protobuf or grpc") {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
	})

	t.Run("serve", func(t *testing.T) {
		t.Parallel()
		recv := newOTLPReceiver(t)
		p := startServeEnv(t, bin, otelEnv("OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_BSP_SCHEDULE_DELAY=60000"),
			true, "serve", "--addr", "127.0.0.1:0", "--skills", skills)
		const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		status, body, _ := httpDo(t, "POST", p.base+"/v1/skills/quick/runs", `{}`,
			append(jsonType, "Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")...)
		if status != 200 {
			t.Fatalf("run: %d %s", status, body)
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(hangTimeout); code != 0 {
			t.Fatalf("exit %d:\n%s", code, p.stderr())
		}
		s, service := recv.span("execute_tool quick")
		if s == nil || service != "skillbox" {
			t.Fatalf("span %v of %q; stderr:\n%s", s, service, p.stderr())
		}
		if !bytes.Equal(s.TraceId, mustHex(t, traceID)) || attrValue(s.Attributes, "skillbox.run.face").GetStringValue() != "http" {
			t.Fatalf("span %v", s)
		}
	})

	t.Run("mcp", func(t *testing.T) {
		t.Parallel()
		// Over stdio, stdout is the protocol's: the console exporter must not write there.
		cmd := exec.Command(bin, "--cache-dir", cacheDir, "--skills", skills, "mcp")
		cmd.Env = otelEnv("OTEL_TRACES_EXPORTER=console")
		stderr := &syncbuf.Buffer{}
		cmd.Stderr = stderr
		ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		meta := mcp.Meta{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "skill_quick"})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v; stderr:\n%s", err, res, stderr.String())
		}
		if err := cs.Close(); err != nil {
			t.Logf("close: %v", err)
		}
		var found bool
		sc := bufio.NewScanner(strings.NewReader(stderr.String()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var span struct {
				Name   string
				Parent struct{ TraceID string }
			}
			if json.Unmarshal(sc.Bytes(), &span) == nil && span.Name == "execute_tool quick" && span.Parent.TraceID == "0af7651916cd43dd8448eb211c80319c" {
				found = true
			}
		}
		if !found {
			t.Fatalf("no span continuing the _meta trace on stderr:\n%s", stderr.String())
		}
	})
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
