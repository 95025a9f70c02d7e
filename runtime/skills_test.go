package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// These tests run the bundled skills in ../skills, built from their Go source.

func TestBundledWordCount(t *testing.T) {
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "word-count", Args: []byte(`{"text":"The cat and the hat.\nThe end","top":2}`), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Words, Lines, Characters int
		Top                      []struct {
			Word  string
			Count int
		}
	}
	must(t, json.Unmarshal(res.Result, &got))
	if got.Words != 7 || got.Lines != 2 || got.Characters != 28 || len(got.Top) != 2 || got.Top[0].Word != "the" || got.Top[0].Count != 3 {
		t.Fatalf("got %+v", got)
	}
	if res.Usage.PeakMemoryBytes == 0 || res.Version != "1.0.0" || !strings.HasPrefix(res.RunID, "run_") {
		t.Fatalf("result metadata %+v", res)
	}
	if _, err := rt.Run(context.Background(), run.Request{Skill: "word-count", Args: []byte(`{"text":"x","top":1000}`), Who: testAdmin}); !errors.Is(err, run.ErrInvalidArgs) ||
		!strings.Contains(err.Error(), `argument "top"`) {
		t.Fatalf("top over its maximum: %v", err)
	}
}

func TestBundledNotes(t *testing.T) {
	ws := t.TempDir()
	p := &policy.Policy{Files: []policy.Mount{{Path: "/workspace", HostPath: filepath.Join(ws, "{skill}"), Access: spec.ReadWrite}}}
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}, Policy: p})
	runOne := func(args string) (string, error) {
		res, err := rt.Run(context.Background(), run.Request{Skill: "notes", Args: []byte(args), Who: testAdmin})
		return string(res.Result), err
	}
	if _, err := runOne(`{"action":"write","name":"todo","text":"- milk\n"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := runOne(`{"action":"append","name":"todo","text":"- eggs\n"}`); err != nil {
		t.Fatal(err)
	}
	got, err := runOne(`{"action":"read","name":"todo"}`)
	if err != nil || !strings.Contains(got, `- milk\n- eggs\n`) {
		t.Fatalf("read: %s %v", got, err)
	}
	if got, err := runOne(`{"action":"list"}`); err != nil || !strings.Contains(got, `"todo"`) {
		t.Fatalf("list: %s %v", got, err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes", "notes", "todo.md")); err != nil || string(b) != "- milk\n- eggs\n" {
		t.Fatalf("on disk: %q %v", b, err)
	}
	if _, err := runOne(`{"action":"read","name":"nope"}`); !errors.Is(err, run.ErrSkillError) || !strings.Contains(err.Error(), `note "nope" not found`) {
		t.Fatalf("missing note: %v", err)
	}
	if _, err := runOne(`{"action":"read","name":"../etc"}`); !errors.Is(err, run.ErrInvalidArgs) {
		t.Fatalf("traversal in a name must fail the schema: %v", err)
	}
	// Without the policy mount, the same skill is refused, and says so.
	bare := newRuntime(t, Config{SkillDirs: []string{"../skills"}})
	res, err := bare.Run(context.Background(), run.Request{Skill: "notes", Args: []byte(`{"action":"list"}`), Who: testAdmin})
	if !errors.Is(err, run.ErrPermissionDenied) || !strings.Contains(err.Error(), "denied") || len(res.Usage.Denied) == 0 {
		t.Fatalf("without a mount: %v %+v", err, res.Usage)
	}
}

// localHTTPGet copies the http-get skill with a manifest that asks for 127.0.0.1.
func localHTTPGet(t *testing.T, timeoutMs int) string {
	dir := t.TempDir()
	sd := filepath.Join(dir, "http-get")
	must(t, os.MkdirAll(sd, 0o755))
	mod, err := os.ReadFile("../skills/http-get/execute.wasm")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile), mod, 0o644))
	raw, err := os.ReadFile("../skills/http-get/skill.json")
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(raw, &m))
	m["permissions"] = map[string]any{"network": []string{"127.0.0.1"}}
	m["limits"] = map[string]any{"timeoutMs": timeoutMs}
	raw, _ = json.Marshal(m)
	must(t, os.WriteFile(filepath.Join(sd, "skill.json"), raw, 0o644))
	return dir
}

func TestBundledHTTPGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><head><title> Fish &amp; Chips </title></head><body>hi</body></html>")
	}))
	defer srv.Close()
	dir := localHTTPGet(t, 10000)
	allow := &policy.Policy{Network: []string{"127.0.0.1"}, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: allow})
	res, err := rt.Run(context.Background(), run.Request{Skill: "http-get", Args: []byte(`{"url":"` + srv.URL + `/moved"}`), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	must(t, json.Unmarshal(res.Result, &got))
	if got["status"] != 200.0 || got["title"] != "Fish & Chips" || got["url"] != srv.URL+"/page" || !strings.HasPrefix(got["contentType"].(string), "text/html") {
		t.Fatalf("got %v", got)
	}
	if res.Usage.Fetches != 1 || res.Usage.BytesIn == 0 || len(res.Usage.HostsContacted) != 1 {
		t.Fatalf("usage %+v", res.Usage)
	}

	// The same grant without allowNetworks: the host is on the grant, but the address is
	// loopback, refused at dial time.
	guarded := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Network: []string{"127.0.0.1"}}})
	res, err = guarded.Run(context.Background(), run.Request{Skill: "http-get", Args: []byte(`{"url":"` + srv.URL + `/"}`), Who: testAdmin})
	if !errors.Is(err, run.ErrPermissionDenied) || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("loopback must be refused at dial time: %v", err)
	}
	if len(res.Usage.Denied) != 1 {
		t.Fatalf("denied %v", res.Usage.Denied)
	}
}

// A run's timeout must stop a guest that is blocked in a host call, not only one in a loop.
func TestTimeoutStopsAHostCallWaitingOnTheNetwork(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := localHTTPGet(t, 300)
	allow := &policy.Policy{Network: []string{"127.0.0.1"}, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: allow})
	compileNow(t, rt, "http-get") // before the clock starts: a Go module takes long under -race
	start := time.Now()
	res, err := rt.Run(context.Background(), run.Request{Skill: "http-get", Args: []byte(`{"url":"` + srv.URL + `/"}`), Who: testAdmin})
	if !errors.Is(err, run.ErrTimeout) {
		t.Fatalf("got %v (%+v)", err, res.Error)
	}
	// Not a timing assertion on the run's speed: a bound that proves the call was interrupted
	// rather than left to the server (which never answers), 400 times the run's timeout.
	if time.Since(start) > 2*time.Minute {
		t.Fatalf("the run was not interrupted")
	}
}

// A real Go guest that runs out of memory (the Go runtime's "fatal error: out of memory") is
// memory_limit, not a trap.
func TestGoGuestOutOfMemory(t *testing.T) {
	dir := t.TempDir()
	sd := filepath.Join(dir, "wc")
	must(t, os.MkdirAll(sd, 0o755))
	mod, err := os.ReadFile("../skills/word-count/execute.wasm")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile), mod, 0o644))
	must(t, os.WriteFile(filepath.Join(sd, "skill.json"), []byte(simple("wc",
		`"parameters":{"text":{"type":"string"}},"limits":{"memoryMiB":12}`)), 0o644))
	// 300,000 distinct words: the frequency map alone outgrows 12 MiB.
	var b strings.Builder
	for i := 0; i < 300_000; i++ {
		fmt.Fprintf(&b, "w%x ", i*7919)
	}
	args, _ := json.Marshal(map[string]string{"text": b.String()})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "wc", Args: args, Who: testAdmin})
	if !errors.Is(err, run.ErrMemoryLimit) {
		t.Fatalf("got %v; logs %v", err, res.Logs)
	}
}
