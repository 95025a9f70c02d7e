package runtime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// recorder returns a tracer provider that keeps every ended span in memory.
func recorder(t testing.TB) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return sr, tp
}

// attrs maps a span's attributes by key.
func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// lastSpan is the one span the last run ended (the recorder keeps them in order).
func lastSpan(t *testing.T, sr *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := sr.Ended()
	for i := len(ended) - 1; i >= 0; i-- {
		if ended[i].Name() == name {
			return ended[i]
		}
	}
	t.Fatalf("no span %q among %d", name, len(ended))
	return nil
}

// Every run has a span named after the tool it executes, with the skill's version, digest and
// usage; a failed run has error.type and an Error status naming its kind, whichever kind.
func TestRunSpanAttributes(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", `"version":"1.2.3"`), "hello")
	fixture(t, dir, "echo", simple("echo", `"parameters":{"n":{"type":"integer"},"success":{"type":"boolean"},"error":{"type":"string"}}`), "echo")
	fixture(t, dir, "loop", simple("loop", `"limits":{"timeoutMs":200}`), "loop")
	fixture(t, dir, "grow", simple("grow", `"limits":{"memoryMiB":2}`), "grow")
	fixture(t, dir, "unreachable", simple("unreachable", ""), "unreachable")
	fixture(t, dir, "bigoutput", simple("bigoutput", ""), "bigoutput")
	sr, tp := recorder(t)
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, TracerProvider: tp})

	tests := []struct {
		name, skill, args string
		kind              run.ErrorKind // "" for success
		spanName          string
	}{
		{"success", "hello", "", "", "execute_tool hello"},
		{"invalid_args", "echo", `{"n":"x"}`, run.KindInvalidArgs, "execute_tool echo"},
		{"not_found", "no-such-skill", "", run.KindNotFound, "execute_tool"},
		{"skill_error", "echo", `{"success":false,"error":"no such city"}`, run.KindSkillError, "execute_tool echo"},
		{"timeout", "loop", "", run.KindTimeout, "execute_tool loop"},
		{"memory_limit", "grow", "", run.KindMemoryLimit, "execute_tool grow"},
		{"trap", "unreachable", "", run.KindTrap, "execute_tool unreachable"},
		{"output_limit", "bigoutput", "", run.KindOutputLimit, "execute_tool bigoutput"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := rt.Run(context.Background(), run.Request{Skill: tc.skill, Args: []byte(tc.args), Face: run.FaceHTTP, Who: access.Local("ci")})
			if (err == nil) != (tc.kind == "") || (err != nil && res.Error.Kind != tc.kind) {
				t.Fatalf("run: %v, want kind %q", err, tc.kind)
			}
			s := lastSpan(t, sr, tc.spanName)
			a := attrs(s)
			if s.SpanKind() != trace.SpanKindInternal || a["gen_ai.operation.name"].AsString() != "execute_tool" ||
				a["gen_ai.tool.name"].AsString() != tc.skill || a["skillbox.run.id"].AsString() != res.RunID ||
				a["skillbox.run.face"].AsString() != "http" || a["skillbox.run.caller"].AsString() != "ci" {
				t.Fatalf("span %s: kind %v, attributes %v", s.Name(), s.SpanKind(), a)
			}
			if tc.kind == "" {
				if s.Status().Code != codes.Unset || a["skillbox.run.outcome"].AsString() != "success" {
					t.Fatalf("status %v, attributes %v", s.Status(), a)
				}
				if _, ok := a["error.type"]; ok {
					t.Fatalf("a successful run has error.type: %v", a)
				}
			} else {
				k := string(tc.kind)
				if s.Status().Code != codes.Error || s.Status().Description != k ||
					a["error.type"].AsString() != k || a["skillbox.run.outcome"].AsString() != k {
					t.Fatalf("status %v, attributes %v", s.Status(), a)
				}
			}
			if tc.skill == "no-such-skill" {
				if _, ok := a["skillbox.skill.digest"]; ok || a["skillbox.run.admitted"].AsBool() {
					t.Fatalf("a refused request has a version or was admitted: %v", a)
				}
				return
			}
			if a["skillbox.skill.digest"].AsString() != res.Digest || !strings.HasPrefix(res.Digest, "sha256:") ||
				a["skillbox.skill.version"].AsString() != res.Version {
				t.Fatalf("version %q digest %q, attributes %v", res.Version, res.Digest, a)
			}
			if tc.kind != run.KindInvalidArgs && (!a["skillbox.run.admitted"].AsBool() ||
				a["skillbox.usage.peak_memory_bytes"].AsInt64() != int64(res.Usage.PeakMemoryBytes) || res.Usage.PeakMemoryBytes == 0) {
				t.Fatalf("usage %+v, attributes %v", res.Usage, a)
			}
			if a["skillbox.run.duration_ms"].AsFloat64() != res.DurationMs {
				t.Fatalf("duration %v, attributes %v", res.DurationMs, a)
			}
		})
	}
}

// A run continues the trace its context carries (an HTTP face puts the caller's traceparent
// there), or a Request's TraceParent when the context has none.
func TestRunSpanContinuesTheCallersTrace(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	sr, tp := recorder(t)
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, TracerProvider: tp})
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled, Remote: true})

	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	if _, err := rt.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	byCtx := lastSpan(t, sr, "execute_tool hello")
	if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	byField := lastSpan(t, sr, "execute_tool hello")
	for _, s := range []sdktrace.ReadOnlySpan{byCtx, byField} {
		if s.SpanContext().TraceID() != traceID || s.Parent().SpanID() != spanID || !s.Parent().IsRemote() {
			t.Fatalf("span %v has parent %v", s.SpanContext(), s.Parent())
		}
	}
	if byCtx.SpanContext().SpanID() == byField.SpanContext().SpanID() {
		t.Fatal("two runs share a span")
	}
}

// Without a TracerProvider nothing is traced: not even through a process-wide provider, which a
// library must neither set nor read.
func TestNoTracerProviderTracesNothing(t *testing.T) {
	sr, tp := recorder(t)
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	if n := len(sr.Ended()) + len(sr.Started()); n != 0 {
		t.Fatalf("%d spans without a TracerProvider", n)
	}
}

// A fetch is a client span, a child of its run's span on either engine, naming the method, the
// host and port, the status and the sizes, and never the URL's path, query or user info. A fetch
// the grant refuses says why.
func TestFetchSpansAreChildrenOfTheRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><head><title>t</title></head></html>"))
	}))
	defer srv.Close()
	dir := localHTTPGet(t, 10000)
	allow := &policy.Policy{Network: []string{"127.0.0.1"}, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, engine := range []Engine{EngineNative, EngineExtism} {
		t.Run(string(engine), func(t *testing.T) {
			sr, tp := recorder(t)
			rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: allow, TracerProvider: tp, Shared: newShared(t, SharedConfig{Engine: engine})})
			url := srv.URL + "/secret/path?token=s3cr3t"
			if _, err := rt.Run(context.Background(), run.Request{Skill: "http-get", Args: []byte(`{"url":"` + url + `"}`), Who: testAdmin}); err != nil {
				t.Fatal(err)
			}
			span, fetch := lastSpan(t, sr, "execute_tool http-get"), lastSpan(t, sr, "GET")
			if fetch.Parent().SpanID() != span.SpanContext().SpanID() || fetch.SpanContext().TraceID() != span.SpanContext().TraceID() {
				t.Fatalf("fetch span's parent %v, run span %v", fetch.Parent(), span.SpanContext())
			}
			a := attrs(fetch)
			if fetch.SpanKind() != trace.SpanKindClient || a["http.request.method"].AsString() != "GET" ||
				a["server.address"].AsString() != "127.0.0.1" || a["server.port"].AsInt64() != int64(port) ||
				a["url.scheme"].AsString() != "http" || a["http.response.status_code"].AsInt64() != 200 ||
				a["http.response.body.size"].AsInt64() == 0 || a["skillbox.fetch.status"].AsString() != "ok" ||
				fetch.Status().Code == codes.Error {
				t.Fatalf("fetch span: %v %v", a, fetch.Status())
			}
			if ra := attrs(span); ra["skillbox.usage.fetches"].AsInt64() != 1 || ra["skillbox.usage.bytes_in"].AsInt64() == 0 {
				t.Fatalf("run span's usage: %v", ra)
			}
			for _, s := range sr.Ended() {
				for _, kv := range s.Attributes() {
					if v := kv.Value.String(); strings.Contains(v, "s3cr3t") || strings.Contains(v, "/secret") {
						t.Fatalf("span %s carries the URL's path or query: %s=%s", s.Name(), kv.Key, v)
					}
				}
			}

			// Refused by the grant (a host it does not list), then by the guard (loopback,
			// without allowNetworks): the fetch span says why, the run is permission_denied.
			guarded := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Network: []string{"127.0.0.1"}}, TracerProvider: tp, Shared: newShared(t, SharedConfig{Engine: engine})})
			for _, c := range []struct{ url, reason string }{
				{"http://localhost:" + strconv.Itoa(port) + "/?token=s3cr3t", "host localhost:" + strconv.Itoa(port) + " is not on the grant"},
				{url, "loopback"},
			} {
				_, err := guarded.Run(context.Background(), run.Request{Skill: "http-get", Args: []byte(`{"url":"` + c.url + `"}`), Who: testAdmin})
				if !errors.Is(err, run.ErrPermissionDenied) {
					t.Fatalf("%s: %v", c.url, err)
				}
				span, fetch := lastSpan(t, sr, "execute_tool http-get"), lastSpan(t, sr, "GET")
				a := attrs(fetch)
				if fetch.Parent().SpanID() != span.SpanContext().SpanID() || !strings.Contains(a["skillbox.fetch.denied"].AsString(), c.reason) ||
					a["skillbox.fetch.status"].AsString() != "denied" || a["error.type"].AsString() != "denied" || fetch.Status().Code != codes.Error {
					t.Fatalf("%s: fetch span %v %v", c.url, a, fetch.Status())
				}
				if strings.Contains(a["skillbox.fetch.denied"].AsString(), "s3cr3t") {
					t.Fatalf("the denial carries the query: %v", a)
				}
				if ra := attrs(span); ra["error.type"].AsString() != "permission_denied" || ra["skillbox.usage.denied"].AsInt64() != 1 {
					t.Fatalf("run span: %v", ra)
				}
			}
		})
	}
}

// BenchmarkRunTraced is a trivial run without a TracerProvider and with one that records every
// span (and exports none), measured interleaved: the cost of tracing a run when it is on.
//
//	go test -run '^$' -bench RunTraced -benchtime 2000x ./runtime/
func BenchmarkRunTraced(b *testing.B) {
	dir := b.TempDir()
	fixture(b, dir, "hello", simple("hello", ""), "hello")
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx := context.Background()
	runOne := func(rt *Runtime) func() {
		return func() {
			if _, err := rt.Run(ctx, run.Request{Skill: "hello", Who: testAdmin}); err != nil {
				b.Fatal(err)
			}
		}
	}
	off := runOne(newRuntime(b, Config{SkillDirs: []string{dir}}))
	on := runOne(newRuntime(b, Config{SkillDirs: []string{dir}, TracerProvider: tp}))
	p50 := interleave.Run(b, interleave.Contender{Name: "off", F: off}, interleave.Contender{Name: "traced", F: on})
	b.ReportMetric(p50["traced"]/p50["off"], "traced/off")
	oo, ob := allocs(off)
	to, tb := allocs(on)
	b.ReportMetric(oo, "off-allocs/op")
	b.ReportMetric(to, "traced-allocs/op")
	b.ReportMetric(tb-ob, "traced-extra-B/op")
}
