//go:build soak

// Package soak holds the soak test: a thousand mixed runs — good ones, hostile ones of every
// class the runtime bounds (a compile bomb among them), reloads and installs — through the
// library, HTTP and MCP at once,
// against one runtime. It asserts that every request gets exactly one answer of the kind it
// should, that the host's memory stays under the admission budget plus the process's baseline,
// that the server answers /healthz throughout, and that no goroutine or file descriptor leaks.
//
//	make soak    (go test -tags soak -run TestSoak -v ./soak/)
package soak

import (
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
	goruntime "runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
)

// TestMain lets the runtimes of these tests compile modules in a child process: this test
// binary, run again (see runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

// Settings of the soak; SOAK_RUNS overrides the number of runs.
const (
	defaultRuns  = 1000
	memoryBudget = 1536 << 20
	maxRuns      = 8
	maxQueue     = 24
)

// A case is one kind of request and the outcomes it may have: its expected kind ("" for
// success), or busy when the runtime had no room.
type testCase struct {
	skill string
	args  string
	want  run.ErrorKind
}

var cases = []testCase{
	{"hello", `{}`, ""},
	{"echo", `{"text":"soak"}`, ""},
	{"go-hello", `{"name":"soak"}`, ""},
	{"echo", `{"text":"soak","deep":` + strings.Repeat("[", 80) + strings.Repeat("]", 80) + `}`, run.KindInvalidArgs},
	{"loop", ``, run.KindTimeout},
	{"grow", ``, run.KindMemoryLimit},
	{"recurse", ``, run.KindTrap},
	{"tablegrow", ``, ""},
	{"errset", ``, run.KindSkillError},
	{"bigoutput", ``, run.KindOutputLimit},
	{"badptr", `{"case":"1"}`, run.KindTrap},
	{"unreachable", ``, run.KindTrap},
	{"codebomb", ``, run.KindNotFound},
	{"compilebomb", ``, run.KindMemoryLimit},
	{"no-such-skill", ``, run.KindNotFound},
	// Script skills, in both interpreters: good, looping, exhausting their memory.
	{"js-hello", `{"name":"soak"}`, ""},
	{"js-loop", ``, run.KindTimeout},
	{"js-bomb", ``, run.KindMemoryLimit},
	{"py-hello", `{"name":"soak"}`, ""},
	{"py-loop", ``, run.KindTimeout},
	{"py-bomb", ``, run.KindMemoryLimit},
}

// outcome is what one request came back with.
type outcome struct {
	face    string
	c       testCase
	kind    run.ErrorKind // "" for success
	answers int
	err     error
}

func TestSoak(t *testing.T) {
	runs := defaultRuns
	if s := os.Getenv("SOAK_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	dir := skillsDir(t)
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testcache.Dir(), Admission: runtime.Admission{MaxRuns: maxRuns, MaxQueue: maxQueue, MemoryBudget: memoryBudget, CompileTimeout: 10 * time.Minute}})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(rt, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	// Warm every module once, so the baseline holds the compiled code and the load measures runs.
	for _, id := range []string{"hello", "echo", "go-hello", "loop", "grow", "recurse", "tablegrow", "errset", "bigoutput", "badptr", "unreachable",
		"js-hello", "js-loop", "js-bomb", "py-hello", "py-loop", "py-bomb"} {
		_, _ = rt.Run(context.Background(), run.Request{Skill: id, Args: []byte(`{"text":"w","case":"0"}`), Who: access.Local("test")})
	}
	// As skillbox serve does (limitGoHeap): the Go heap's soft limit is the budget plus headroom.
	debug.SetMemoryLimit(memoryBudget + 256<<20)
	goruntime.GC()
	debug.FreeOSMemory()
	baseRSS := rss()
	baseGoroutines := goruntime.NumGoroutine()
	baseFDs := openFDs()
	t.Logf("baseline: RSS %d MiB, %d goroutines, %d fds; budget %d MiB", baseRSS>>20, baseGoroutines, baseFDs, memoryBudget>>20)

	var peakRSS atomic.Int64
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { // RSS sampler
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				peakRSS.Store(max(peakRSS.Load(), rss()))
			}
		}
	})
	var healthFails atomic.Int64
	var healthChecks atomic.Int64
	bg.Go(func() { // the server answers throughout (the client's timeout only guards against a hang)
		client := &http.Client{Timeout: 2 * time.Minute}
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			healthChecks.Add(1)
			resp, err := client.Get(ts.URL + "/healthz")
			if err != nil || resp.StatusCode != 200 {
				healthFails.Add(1)
				continue
			}
			resp.Body.Close()
		}
	})
	var mgmt atomic.Int64
	bg.Go(func() { // reloads, installs and hostile uploads mid-flight
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(150 * time.Millisecond):
			}
			switch i % 4 {
			case 0:
				if err := rt.Reload(context.Background()); err != nil {
					t.Errorf("reload: %v", err)
				}
			case 1:
				body, ctype := helloPackage(t, fmt.Sprintf("installed-%d", i))
				// Under load, the runtime may have no room to compile it: busy, never invalid.
				if code := upload(t, ts.URL, "POST", "/v1/skills", body, ctype); code != 201 && code != 429 {
					t.Errorf("install: %d, want 201 or 429", code)
				}
			case 2:
				if code := uploadRaw(t, ts.URL, "/v1/skills", "application/gzip", gzipBomb()); code != 413 {
					t.Errorf("gzip bomb upload: %d, want 413", code)
				}
			case 3:
				body, ctype := schemaBomb(fmt.Sprintf("bomb-%d", i))
				if code := upload(t, ts.URL, "POST", "/v1/skills", body, ctype); code != 422 {
					t.Errorf("schema bomb upload: %d, want 422", code)
				}
			}
			mgmt.Add(1)
		}
	})

	mcpSession := connectMCP(t, ts.URL+"/mcp")
	results := make([]outcome, runs)
	start := time.Now()
	var wg sync.WaitGroup
	// In flight from the clients: more than the runtime runs and queues, so some are refused busy.
	sem := make(chan struct{}, maxRuns+maxQueue+8)
	for i := range runs {
		c := cases[i%len(cases)]
		face := []string{"library", "http", "mcp"}[(i/len(cases))%3]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i] = do(t, rt, ts.URL, mcpSession, face, c)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	bg.Wait()
	_ = mcpSession.Close()
	ts.Close()
	st := rt.Stats()
	if err := rt.Close(context.Background()); err != nil {
		t.Errorf("close: %v", err)
	}

	// Every request got exactly one answer, of a kind its case allows.
	counts := map[string]int{}
	for _, r := range results {
		key := r.face + " " + r.c.skill + " " + string(r.kind)
		counts[key]++
		switch {
		case r.err != nil:
			t.Errorf("%s %s: %v", r.face, r.c.skill, r.err)
		case r.answers != 1:
			t.Errorf("%s %s: %d answers", r.face, r.c.skill, r.answers)
		case r.kind != r.c.want && r.kind != run.KindBusy:
			t.Errorf("%s %s %s: kind %q, want %q (or busy)", r.face, r.c.skill, r.c.args, r.kind, r.c.want)
		}
	}
	peak := peakRSS.Load()
	t.Logf("%d runs in %s (%d reloads, installs and hostile uploads); peak RSS %d MiB over a baseline of %d MiB (bound: budget %d MiB + baseline); peak charged %d MiB; max runs at once %d",
		runs, elapsed.Round(time.Millisecond), mgmt.Load(), peak>>20, baseRSS>>20, memoryBudget>>20, st.Admission.PeakMemoryInUse>>20, st.Admission.PeakRunning)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("  %-40s %d", k, counts[k])
	}
	if peak > memoryBudget+baseRSS {
		t.Errorf("peak RSS %d MiB is over the budget (%d MiB) plus the baseline (%d MiB)", peak>>20, memoryBudget>>20, baseRSS>>20)
	}
	if st.Admission.PeakRunning > maxRuns {
		t.Errorf("%d runs at once, over MaxRuns %d", st.Admission.PeakRunning, maxRuns)
	}
	if healthFails.Load() > 0 {
		t.Errorf("/healthz failed %d times of %d", healthFails.Load(), healthChecks.Load())
	}
	// Nothing leaks: goroutines and descriptors come back to their baseline (HTTP keep-alive
	// goroutines and wazero's close-watchers wind down within moments; the 2 minutes allowed
	// only guard against a hang).
	settled := func() bool {
		return goruntime.NumGoroutine() <= baseGoroutines+5 && openFDs() <= baseFDs+5
	}
	for deadline := time.Now().Add(2 * time.Minute); !settled() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if !settled() {
		buf := make([]byte, 1<<20)
		n := goruntime.Stack(buf, true)
		t.Errorf("leak: %d goroutines (baseline %d), %d fds (baseline %d)\n%s", goruntime.NumGoroutine(), baseGoroutines, openFDs(), baseFDs, buf[:n])
	}
}

// do makes one request through face and returns what came back.
func do(t *testing.T, rt *runtime.Runtime, base string, cs *mcp.ClientSession, face string, c testCase) outcome {
	o := outcome{face: face, c: c}
	// A hang guard, not a deadline the runs race: a request waits MaxWait at most to be admitted,
	// then runs within its skill's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	switch face {
	case "library":
		res, err := rt.Run(ctx, run.Request{Skill: c.skill, Args: []byte(c.args), Who: access.Local("test")})
		o.answers = 1
		if res == nil {
			o.err = fmt.Errorf("nil result (%v)", err)
		} else if res.Error != nil {
			o.kind = res.Error.Kind
		}
	case "http":
		body := `{"args":` + orEmpty(c.args) + `}`
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/skills/"+c.skill+"/runs", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			o.err = err
			return o
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		o.answers = 1
		switch resp.StatusCode {
		case 200:
			var res run.Result
			if err := json.Unmarshal(data, &res); err != nil {
				o.err = fmt.Errorf("200 with %s", data)
			} else if res.Error != nil {
				o.kind = res.Error.Kind
			}
		case 404, 409:
			o.kind = run.KindNotFound
		case 422:
			o.kind = run.KindInvalidArgs
		case 429:
			o.kind = run.KindBusy
		default:
			o.err = fmt.Errorf("status %d: %s", resp.StatusCode, data)
		}
	case "mcp":
		var args map[string]any
		_ = json.Unmarshal([]byte(orEmpty(c.args)), &args)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_" + strings.ReplaceAll(c.skill, "-", "_"), Arguments: args})
		o.answers = 1
		switch {
		case err != nil && (c.skill == "codebomb" || c.skill == "no-such-skill"):
			o.kind = run.KindNotFound // not a tool: the SDK refuses the call itself
		case err != nil:
			o.err = err
		case res.IsError:
			o.kind = run.ErrorKind(fmt.Sprint(res.Meta["skillbox/errorKind"]))
			if o.kind == "" || o.kind == "<nil>" {
				o.kind = run.ErrorKind(strings.SplitN(res.Content[0].(*mcp.TextContent).Text, ":", 2)[0])
			}
		}
	}
	return o
}

func orEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func connectMCP(t *testing.T, url string) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// skillsDir writes the soak's skills: the WAT fixtures as quick or hostile skills, the bundled Go
// hello as a real guest, and a module that declares 2^32-1 functions.
func skillsDir(t *testing.T) string {
	dir := t.TempDir()
	wasm := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", name+".wasm"))
		if err != nil {
			t.Fatalf("%v (run make fixtures)", err)
		}
		return data
	}
	add := func(id, extra string, module []byte) {
		m := `{"id":"` + id + `","name":"` + id + `","description":"soak skill ` + id + `"` + extra + `}`
		writeFile(t, filepath.Join(dir, id, "skill.json"), []byte(m))
		writeFile(t, filepath.Join(dir, id, "execute.wasm"), module)
	}
	add("hello", ``, wasm("hello"))
	add("echo", `,"parameters":{"text":{"type":"string","required":true},"deep":{"type":"array"}}`, wasm("echo"))
	add("loop", `,"limits":{"timeoutMs":200}`, wasm("loop"))
	add("grow", `,"limits":{"memoryMiB":8}`, wasm("grow"))
	add("recurse", ``, wasm("recurse"))
	add("tablegrow", `,"limits":{"memoryMiB":16}`, wasm("tablegrow"))
	add("errset", `,"limits":{"maxOutputBytes":2048}`, wasm("errset"))
	add("bigoutput", ``, wasm("bigoutput"))
	add("badptr", `,"parameters":{"case":{"type":"string","required":true}}`, wasm("badptr"))
	add("unreachable", ``, wasm("unreachable"))
	add("codebomb", ``, []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 0x0a, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f})
	add("compilebomb", ``, compileBomb())
	goHello, err := os.ReadFile(filepath.Join("..", "skills", "hello", "execute.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	add("go-hello", `,"parameters":{"name":{"type":"string"}}`, goHello)
	script := func(id, extra, file, code string) {
		m := `{"id":"` + id + `","name":"` + id + `","description":"soak skill ` + id + `"` + extra + `}`
		writeFile(t, filepath.Join(dir, id, "skill.json"), []byte(m))
		writeFile(t, filepath.Join(dir, id, file), []byte(code))
	}
	name := `,"parameters":{"name":{"type":"string"}}`
	script("js-hello", name, "execute.js", `export const execute = (args, ctx) => { ctx.log("hi"); return {greeting: "Hello, " + args.name}; };`)
	script("js-loop", `,"limits":{"timeoutMs":200}`, "execute.js", `export function execute() { for (;;) {} }`)
	script("js-bomb", `,"limits":{"memoryMiB":16}`, "execute.js", `export function execute() { const a = []; for (;;) a.push(new Array(1e5).fill(a.length)); }`)
	script("py-hello", name, "execute.py", "def execute(args, ctx):\n    ctx.log('hi')\n    return {'greeting': 'Hello, ' + args['name']}\n")
	script("py-loop", `,"limits":{"timeoutMs":300}`, "execute.py", "def execute(args, ctx):\n    while True:\n        pass\n")
	script("py-bomb", `,"limits":{"memoryMiB":32}`, "execute.py", "def execute(args, ctx):\n    a = []\n    while True:\n        a.append(bytearray(1 << 20))\n")
	return dir
}

func writeFile(t *testing.T, p string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// helloPackage is a multipart upload of a valid skill.
func helloPackage(t *testing.T, id string) ([]byte, string) {
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "hello.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return multipartPackage(map[string][]byte{
		"skill.json":   []byte(`{"id":"` + id + `","name":"x","description":"installed during the soak"}`),
		"execute.wasm": wasm,
	})
}

// schemaBomb is a multipart upload whose manifest nests its parameters 1,400 levels deep.
func schemaBomb(id string) ([]byte, string) {
	deep := strings.Repeat(`{"type":"array","items":`, 1400) + `{"type":"string"}` + strings.Repeat(`}`, 1400)
	return multipartPackage(map[string][]byte{
		"skill.json":   []byte(`{"id":"` + id + `","name":"x","description":"y","parameters":{"a":` + deep + `}}`),
		"execute.wasm": {0, 'a', 's', 'm', 1, 0, 0, 0},
	})
}

func multipartPackage(files map[string][]byte) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for name, data := range files {
		part, _ := w.CreateFormFile(name, name)
		_, _ = part.Write(data)
	}
	_ = w.Close()
	return b.Bytes(), w.FormDataContentType()
}

func upload(t *testing.T, base, method, path string, body []byte, ctype string) int {
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func uploadRaw(t *testing.T, base, path, ctype string, body []byte) int {
	return upload(t, base, "POST", path, body, ctype)
}

// gzipBomb is ~1 MiB of gzip that inflates to a gigabyte of zeros in one tar entry.
var gzipBomb = sync.OnceValue(func() []byte {
	return makeGzipBomb(1 << 30)
})

func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}
