// Package wasm holds the conformance guests, one per language, and the one test they all pass:
// every language's guest, run against the same loopback server and grant, must produce the same
// result, byte for byte after JSON normalisation.
package wasm

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// TestMain lets the runtimes of these tests compile modules in a child process: this test
// binary, run again (see runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

// languages are the guest directories that hold a built conformance.wasm: every language's guest
// runs the same test. Its build.sh rebuilds it from source.
func languages(t *testing.T) []string {
	mods, err := filepath.Glob("*/conformance.wasm")
	must(t, err)
	var langs []string
	for _, m := range mods {
		langs = append(langs, filepath.Dir(m))
	}
	if len(langs) == 0 {
		t.Fatal("no conformance.wasm under examples/wasm")
	}
	return langs
}

const manifest = `{
  "id": "conformance", "name": "Conformance", "description": "Exercises every host function",
  "parameters": {"type": "object"},
  "permissions": {
    "network": ["127.0.0.1"],
    "env": ["GREETING"],
    "files": [{"path": "/workspace", "access": "read-write"}, {"path": "/data", "access": "read-only"}]
  },
  "limits": {"maxWriteBytes": 1000, "timeoutMs": 60000}
}`

func TestConformance(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", r.Header.Get("X-Test"))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, r.Method+":"+string(body))
	}))
	defer srv.Close()
	closed := closedPort(t)

	work := t.TempDir()
	ws, data := filepath.Join(work, "ws"), filepath.Join(work, "data")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.MkdirAll(data, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "in.txt"), []byte("input text"), 0o644))
	must(t, os.WriteFile(filepath.Join(data, "ro.txt"), []byte("read only"), 0o644))
	pol := &policy.Policy{
		// Room for the run's timeout: what the test asserts is the guest's result, not a clock.
		Limits:        spec.Limits{TimeoutMs: 60_000},
		Network:       []string{"127.0.0.1"},
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Env:           map[string]string{"GREETING": "hej", "HOME": "/root"},
		Files: []policy.Mount{
			{Path: "/workspace", HostPath: ws, Access: spec.ReadWrite},
			{Path: "/data", HostPath: data, Access: spec.ReadWrite},
		},
	}
	args, _ := json.Marshal(map[string]any{
		"fetchUrl": srv.URL + "/echo", "deniedUrl": "http://example.invalid/", "missingUrl": "http://127.0.0.1:" + closed + "/",
		"envName": "GREETING", "deniedEnv": "HOME",
		"readPath": "/workspace/in.txt", "missingPath": "/workspace/nope.txt",
		"writePath": "/workspace/out/result.txt", "writeData": "written by conformance",
		"readOnlyPath": "/data/ro.txt", "escapePath": "/workspace/../etc/passwd", "bigWrite": 5000,
	})
	// The result every guest must give, shared with the Go guest's native test against
	// skillboxtest's scripted host (go/main_test.go).
	var want map[string]any
	wantJSON, err := os.ReadFile("conformance_want.json")
	must(t, err)
	must(t, json.Unmarshal(wantJSON, &want))

	// Every guest runs on both engines (the native kernel, and Extism's go-sdk as the reference),
	// and the two runs must leave the same record: result, usage, denials and logs.
	for _, lang := range languages(t) {
		records := map[runtime.Engine]record{}
		for _, engine := range []runtime.Engine{runtime.EngineNative, runtime.EngineExtism} {
			t.Run(lang+"/"+string(engine), func(t *testing.T) {
				skills := t.TempDir()
				dir := filepath.Join(skills, "conformance")
				must(t, os.MkdirAll(dir, 0o755))
				must(t, os.WriteFile(filepath.Join(dir, "skill.json"), []byte(manifest), 0o644))
				mod, err := os.ReadFile(filepath.Join(lang, "conformance.wasm"))
				must(t, err)
				must(t, os.WriteFile(filepath.Join(dir, "execute.wasm"), mod, 0o644))

				rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{skills}, Policy: pol, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testcache.Dir(), Engine: engine})})
				must(t, err)
				defer rt.Close(context.Background())
				s, err := rt.Skill("conformance")
				must(t, err)
				s.ModuleHash() // reads and checks the module: loading left it unchecked
				if s.Status() != catalog.StatusActive {
					t.Fatalf("skill not active: %v", s.Err())
				}
				// The policy allows /data read-write, the manifest asks read-only: the grant is read-only.
				if got := s.Grant().Files; len(got) != 3 || got[1].Access != spec.ReadOnly {
					t.Fatalf("granted files %+v", got)
				}

				res, err := rt.Run(context.Background(), run.Request{Skill: "conformance", Args: args, Who: access.Local("test")})
				if err != nil {
					t.Fatalf("run: %v\nlogs: %+v", err, res.Logs)
				}
				var got map[string]any
				must(t, json.Unmarshal(res.Result, &got))
				if !reflect.DeepEqual(got, want) {
					for k := range want {
						if !reflect.DeepEqual(got[k], want[k]) {
							t.Errorf("%s: got %#v, want %#v", k, got[k], want[k])
						}
					}
					for k := range got {
						if _, ok := want[k]; !ok {
							t.Errorf("unexpected key %s: %#v", k, got[k])
						}
					}
				}

				// What the host recorded must match what the guest saw.
				var levels []string
				for _, l := range res.Logs {
					if strings.HasPrefix(l.Message, "conformance: ") {
						levels = append(levels, l.Level)
					}
				}
				if !reflect.DeepEqual(levels, []string{"debug", "info", "warn", "error"}) {
					t.Errorf("log levels %v", levels)
				}
				denied := strings.Join(res.Usage.Denied, "\n")
				for _, w := range []string{"fetch http://example.invalid/", "env HOME", "write /data/ro.txt"} {
					if !strings.Contains(denied, w) {
						t.Errorf("usage.denied lacks %q:\n%s", w, denied)
					}
				}
				if res.Usage.Fetches != 3 || res.Usage.BytesOut != 4 {
					t.Errorf("fetches %d bytes out %d; want 3 and 4", res.Usage.Fetches, res.Usage.BytesOut)
				}
				host := strings.TrimPrefix(srv.URL, "http://")
				if !contains(res.Usage.HostsContacted, host) {
					t.Errorf("hosts contacted %v lacks %s", res.Usage.HostsContacted, host)
				}
				if !contains(res.Usage.FilesWritten, "/workspace/out/result.txt") || !contains(res.Usage.FilesRead, "/workspace/in.txt") {
					t.Errorf("files read %v written %v", res.Usage.FilesRead, res.Usage.FilesWritten)
				}
				if b, err := os.ReadFile(filepath.Join(ws, "out", "result.txt")); err != nil || string(b) != "written by conformance" {
					t.Errorf("file on disk: %q %v", b, err)
				}
				if _, err := os.Stat(filepath.Join(ws, "out", "result.txt.big")); err == nil {
					t.Errorf("the over-quota write left a file")
				}
				records[engine] = recordOf(res)
			})
		}
		if n, e := records[runtime.EngineNative], records[runtime.EngineExtism]; !reflect.DeepEqual(n, e) {
			t.Errorf("%s: the engines disagree\nnative: %+v\nextism: %+v", lang, n, e)
		}
	}
}

// record is what must be the same on both engines: everything a run reports but its timings and
// its memory peak (the Extism kernel's memory counts in one, not the other).
type record struct {
	Result string
	Usage  run.Usage
	Logs   []string
}

func recordOf(res *run.Result) record {
	r := record{Result: string(res.Result), Usage: res.Usage}
	r.Usage.PeakMemoryBytes = 0
	for _, l := range res.Logs {
		r.Logs = append(r.Logs, l.Level+"|"+l.Source+"|"+l.Message)
	}
	return r
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
