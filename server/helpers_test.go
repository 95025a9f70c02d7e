package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// TestMain lets the runtimes of these tests compile modules in a child process: this test
// binary, run again (see runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

// testCache is the compilation cache shared with the other packages' tests (and kept between
// runs): a Go-built bundled module takes seconds to compile under -race.
var testCache = testcache.Dir()

// wasmFixture reads a module built from testdata/wat (testdata/wasm/<name>.wasm).
func wasmFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", name+".wasm"))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return data
}

// manifestJSON is a minimal valid manifest for id with extra JSON members spliced in.
func manifestJSON(id, extra string) string {
	m := `{"id":"` + id + `","name":"` + id + `","description":"test skill ` + id + `"`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

// writeFiles writes files (slash paths -> contents) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture writes skill id into skillsDir: the manifest, the WAT-built module wasm (if any) and
// extra files.
func fixture(t testing.TB, skillsDir, id, manifest, wasm string, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(skillsDir, id)
	files := map[string]string{"skill.json": manifest}
	if wasm != "" {
		files["execute.wasm"] = string(wasmFixture(t, wasm))
	}
	for k, v := range extra {
		files[k] = v
	}
	writeFiles(t, dir, files)
	return dir
}

// testEnv is a Server over real loopback HTTP.
type testEnv struct {
	ts  *httptest.Server
	rt  *runtime.Runtime
	srv *Server
	dir string // the first (writable) skills directory
}

// newEnv serves dirs (the first is where Install writes) with opts.
func newEnv(t testing.TB, opts Options, dirs ...string) *testEnv {
	t.Helper()
	return newEnvRuntime(t, opts, runtime.Config{}, dirs...)
}

// newEnvRuntime is newEnv with a runtime configured by cfg (its SkillDirs are set, and a Shared
// on the tests' cache unless it has one).
func newEnvRuntime(t testing.TB, opts Options, cfg runtime.Config, dirs ...string) *testEnv {
	t.Helper()
	cfg.SkillDirs = dirs
	if cfg.Shared == nil {
		cfg.Shared = testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache})
	}
	// Skills stay unchecked until used, so what a test sees does not depend on how far the
	// background check got (serve runs it; the runtime's own tests cover it).
	cfg.NoBackgroundCheck = true
	rt, err := runtime.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	s, err := New(rt, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	env := &testEnv{ts: ts, rt: rt, srv: s}
	if len(dirs) > 0 {
		env.dir = dirs[0]
	}
	return env
}

// watEnv serves a fresh skills directory holding the WAT fixtures as quick skills: hello, echo
// (its result is its arguments), and loop (never returns; timeoutMs as given).
func watEnv(t testing.TB, opts Options, loopTimeoutMs int) *testEnv {
	t.Helper()
	return watEnvRuntime(t, opts, runtime.Config{}, loopTimeoutMs)
}

// watEnvRuntime is watEnv with a runtime configured by cfg.
func watEnvRuntime(t testing.TB, opts Options, cfg runtime.Config, loopTimeoutMs int) *testEnv {
	t.Helper()
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", `"version":"1.0.0"`), "hello", nil)
	fixture(t, dir, "echo", manifestJSON("echo", `"version":"1.0.0","parameters":{"type":"object"}`), "echo", nil)
	fixture(t, dir, "loop", manifestJSON("loop", fmt.Sprintf(`"limits":{"timeoutMs":%d}`, loopTimeoutMs)), "loop", nil)
	return newEnvRuntime(t, opts, cfg, dir)
}

// reply is a finished HTTP exchange.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// decode unmarshals the body into v, failing the test if it is not JSON.
func (r reply) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body is not JSON (%v): %s", err, r.body)
	}
}

// object returns the body as a JSON object.
func (r reply) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

// send makes one request; header is name, value pairs ("Host" sets the request's Host).
func send(t testing.TB, method, url string, body io.Reader, header ...string) reply {
	t.Helper()
	return sendCtx(t, context.Background(), method, url, body, header...)
}

func sendCtx(t testing.TB, ctx context.Context, method, url string, body io.Reader, header ...string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if strings.EqualFold(header[i], "Host") {
			req.Host = header[i+1] // Go sends req.Host, never a Host in req.Header
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

func get(t testing.TB, url string, header ...string) reply {
	t.Helper()
	return send(t, http.MethodGet, url, nil, header...)
}

// post sends a JSON body (Content-Type: application/json unless header sets another).
func post(t testing.TB, url, body string, header ...string) reply {
	t.Helper()
	return send(t, http.MethodPost, url, strings.NewReader(body), append([]string{"Content-Type", "application/json"}, header...)...)
}

// apiErr is the documented error shape.
type apiErr struct {
	Error struct {
		Code    string   `json:"code"`
		Message string   `json:"message"`
		Details []string `json:"details"`
	} `json:"error"`
}

// wantError checks r is status with the JSON error shape and code, and returns the error.
func wantError(t testing.TB, r reply, status int, code string) apiErr {
	t.Helper()
	var e apiErr
	if r.status != status {
		t.Errorf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json: %s", ct, r.body)
	}
	// The whole body must be exactly the error shape: {"error": {...}} and nothing else.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &top); err != nil || len(top) != 1 || top["error"] == nil {
		t.Errorf("body is not {\"error\": {...}}: %s", r.body)
		return e
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Errorf("error body: %v: %s", err, r.body)
	}
	if code != "" && e.Error.Code != code {
		t.Errorf("code %q, want %q: %s", e.Error.Code, code, r.body)
	}
	if e.Error.Message == "" {
		t.Errorf("empty message: %s", r.body)
	}
	return e
}

// runResult decodes a run's 200 reply.
func runResult(t testing.TB, r reply) run.Result {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("run: %s", r)
	}
	var res run.Result
	r.decode(t, &res)
	return res
}

// sseEvent is one server-sent event: its "id:" (when it has one), its "event:" name and its
// "data:" (JSON) payload.
type sseEvent struct {
	id   string
	name string
	data json.RawMessage
	ev   run.Event
}

// readSSE reads events from r until fn returns false or the stream ends. Every event must have
// exactly one name and one data line, and the data must be JSON whose type is the event's name.
func readSSE(t testing.TB, r io.Reader, fn func(sseEvent) bool) error {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	var cur sseEvent
	var datas int
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name == "" && datas == 0 && cur.id == "" {
				continue
			}
			if datas != 1 {
				t.Errorf("event %q has %d data lines", cur.name, datas)
			}
			if !json.Valid(cur.data) {
				t.Errorf("event %q: data is not JSON: %s", cur.name, cur.data)
			} else if err := json.Unmarshal(cur.data, &cur.ev); err != nil {
				t.Errorf("event %q: %v", cur.name, err)
			} else if cur.ev.Type != cur.name {
				t.Errorf("event %q carries type %q", cur.name, cur.ev.Type)
			}
			if !fn(cur) {
				return nil
			}
			cur, datas = sseEvent{}, 0
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = json.RawMessage(strings.TrimPrefix(line, "data: "))
			datas++
		case strings.HasPrefix(line, ":"):
			// a comment (keep-alive)
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return sc.Err()
}

// metricValue reads one sample of the /metrics text, by its full name with labels.
func metricValue(text, sample string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// hangGuard bounds a wait for something that must happen (a condition polled with waitFor, a
// whole client exchange, which may include compiling a module): it only
// guards against a hang, and is long enough that a slow, busy machine never reaches it. It is no
// measure of speed.
const hangGuard = 5 * time.Minute

// waitFor polls cond every 20ms until it holds or d passes (a hang guard: pass hangGuard).
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metricsText fetches /metrics.
func metricsText(t testing.TB, base string, header ...string) string {
	t.Helper()
	r := get(t, base+"/metrics", header...)
	if r.status != 200 {
		t.Fatalf("metrics: %s", r)
	}
	return string(r.body)
}

// multipartBody encodes files as form-data file parts, the field name being the package path,
// plus plain fields.
func multipartBody(t testing.TB, files map[string][]byte, fields map[string]string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		fw, err := w.CreateFormFile(name, filepath.Base(name))
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, w.FormDataContentType()
}

// pathParam turns echo's route syntax into OpenAPI's: ":id" -> "{id}", "*" -> "{path}".
var pathParam = regexp.MustCompile(`:([A-Za-z_]+)`)

func openapiPath(echoPath string) string {
	p := pathParam.ReplaceAllString(echoPath, "{$1}")
	if strings.HasSuffix(p, "/*") {
		p = strings.TrimSuffix(p, "*") + "{path}"
	}
	return p
}
