package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// The differential test runs the same skills with the same arguments under the same policy on
// both engines — the native kernel and Extism's go-sdk, the reference — and requires the same
// outcome: success, result, error kind and message, and the host-call record (usage, denials,
// logs). Where the native kernel is stricter by design, the case says so (diverges) and the test
// requires exactly that difference. The conformance guests of every language are compared the
// same way in examples/wasm.

// outcome is what the differential test compares of a run.
type outcome struct {
	Success bool
	Result  string
	Kind    run.ErrorKind
	Message string
	Usage   run.Usage
	Logs    []string
	Dropped int
}

func outcomeOf(res *run.Result) outcome {
	o := outcome{Success: res.Success, Dropped: res.LogsDropped, Usage: res.Usage}
	o.Usage.PeakMemoryBytes = 0 // the engines' memories differ by design (Extism's kernel has its own)
	if res.Result != nil {
		var buf bytes.Buffer
		if json.Compact(&buf, res.Result) == nil {
			o.Result = buf.String()
		} else {
			o.Result = string(res.Result)
		}
	}
	if res.Error != nil {
		o.Kind, o.Message = res.Error.Kind, res.Error.Message
	}
	for _, l := range res.Logs {
		o.Logs = append(o.Logs, l.Level+"|"+l.Source+"|"+l.Message)
	}
	return o
}

// diffCase is one run both engines make.
type diffCase struct {
	name, skill, args string
	// diverges, when set, is the native engine's intended difference. Extism's outcome is then
	// only recorded, not compared.
	diverges *divergence
	// sameKindOnly compares everything but the error message, for a failure each engine words
	// its own way.
	sameKindOnly bool
}

// divergence is the native engine's error kind, and a fragment of its message.
type divergence struct {
	kind run.ErrorKind
	msg  string
}

func diverge(kind run.ErrorKind, msg string) *divergence { return &divergence{kind, msg} }

// diffFixtures lays out every WAT fixture as a skill, with the manifests the other tests use.
func diffFixtures(t *testing.T, dir string) {
	fix := func(id, extra string) { fixture(t, dir, id, simple(id, extra), id) }
	fix("hello", "")
	fix("echo", `"parameters":{"text":{"type":"string","default":"d"}}`)
	fix("badptr", `"parameters":{"case":{"type":"string","required":true}}`)
	fix("kernelabuse", `"parameters":{"case":{"type":"string","required":true}}`)
	fix("bigname", `"permissions":{"env":["X"]}`)
	fix("bigoutput", "")
	fix("controls", "")
	fix("envloop", `"permissions":{"env":["X"]}`)
	fix("calls", `"parameters":{"n":{"type":"integer"}},"permissions":{"env":["X"]}`)
	fix("errset", `"limits":{"maxOutputBytes":2048}`)
	fix("fullmem", `"limits":{"memoryMiB":2}`)
	fix("grow", `"limits":{"memoryMiB":4}`)
	fix("allocloop", `"limits":{"memoryMiB":8}`)
	fix("logflood", `"limits":{"maxLogBytes":6400,"timeoutMs":120000}`)
	fix("loop", `"limits":{"timeoutMs":200}`)
	fix("sleep", `"limits":{"timeoutMs":200}`)
	fix("recurse", "")
	fix("tablegrow", `"limits":{"memoryMiB":16}`)
	fix("unreachable", "")
	fix("spin", `"parameters":{"n":{"type":"integer"}}`)
	fixture(t, dir, "noexport", simple("noexport", `"entrypoint":"run"`), "noexport")
	fixture(t, dir, "noentry", simple("noentry", ""), "noexport")
}

var diffCases = []diffCase{
	{name: "hello", skill: "hello"},
	{name: "echo", skill: "echo", args: `{"text":"héllo \u0000 world"}`},
	{name: "echo-default", skill: "echo", args: `{}`},
	{name: "badptr-env", skill: "badptr", args: `{"case":"1"}`},
	{name: "badptr-read", skill: "badptr", args: `{"case":"2"}`},
	{name: "badptr-fetch", skill: "badptr", args: `{"case":"3"}`},
	{name: "badptr-log", skill: "badptr", args: `{"case":"4"}`},
	{name: "badptr-none", skill: "badptr", args: `{"case":"0"}`},
	// Extism's kernel answers 0 to a load past its memory, drops a store at offset 0 (its Go
	// store_u64 writes over the kernel's own header), ignores an output range past its blocks,
	// and reads a variable name that is no block as ""; the native kernel stops each as a guest
	// fault.
	{name: "kernel-load-outside", skill: "kernelabuse", args: `{"case":"1"}`, diverges: diverge(run.KindTrap, "load_u8: outside the kernel's memory blocks")},
	{name: "kernel-store-at-0", skill: "kernelabuse", args: `{"case":"2"}`, diverges: diverge(run.KindTrap, "store_u64: outside the kernel's memory blocks")},
	{name: "kernel-output-outside", skill: "kernelabuse", args: `{"case":"3"}`, diverges: diverge(run.KindTrap, "output_set: the output range is outside")},
	{name: "kernel-var-get-no-block", skill: "kernelabuse", args: `{"case":"4"}`, diverges: diverge(run.KindTrap, "var_get: not a live memory block")},
	{name: "kernel-http-request", skill: "kernelabuse", args: `{"case":"5"}`, sameKindOnly: true},
	{name: "bigname", skill: "bigname"},
	{name: "bigoutput", skill: "bigoutput"},
	{name: "controls", skill: "controls"},
	{name: "envloop", skill: "envloop"},
	{name: "calls-0", skill: "calls", args: `{"n":0}`},
	{name: "calls-3000", skill: "calls", args: `{"n":3000}`},
	{name: "errset", skill: "errset"},
	{name: "fullmem", skill: "fullmem"},
	{name: "grow", skill: "grow"},
	{name: "allocloop", skill: "allocloop"},
	{name: "logflood", skill: "logflood"},
	{name: "loop", skill: "loop"},
	{name: "sleep", skill: "sleep"},
	// The native engine bounds the wasm call stack (interrupt.StackBytes); Extism's is wazero's,
	// about 50 MB deeper. Both trap.
	{name: "recurse", skill: "recurse", diverges: diverge(run.KindTrap, "stack overflow: the guest's calls nest deeper than its 2 MiB")},
	{name: "tablegrow", skill: "tablegrow"},
	{name: "unreachable", skill: "unreachable"},
	{name: "spin", skill: "spin", args: `{"n":100000}`},
	{name: "noexport-named", skill: "noexport"},
	{name: "noexport-missing", skill: "noentry"},
	{name: "invalid-args", skill: "echo", args: `{"text":5}`},
	{name: "unknown-skill", skill: "nope"},
	// The bundled skills, built from their Go sources.
	{name: "skill-hello", skill: "hello-go", args: `{"name":"Ada"}`},
	{name: "skill-word-count", skill: "word-count", args: `{"text":"the cat and the hat"}`},
	{name: "skill-notes-write", skill: "notes", args: `{"action":"write","name":"a.md","text":"# A"}`},
	{name: "skill-notes-read", skill: "notes", args: `{"action":"read","name":"a.md"}`},
	{name: "skill-notes-list", skill: "notes", args: `{"action":"list"}`},
	{name: "skill-notes-missing", skill: "notes", args: `{"action":"read","name":"zz.md"}`},
	{name: "skill-http-get", skill: "http-get", args: `{"url":"%SERVER%/page"}`},
	{name: "skill-http-get-denied", skill: "http-get", args: `{"url":"http://169.254.169.254/latest"}`},
}

func TestEnginesAgree(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	defer srv.Close()

	// One set of skill directories per engine: a write by one engine's run must not be read by
	// the other's.
	build := func(engine Engine) *Runtime {
		base := t.TempDir()
		dir := filepath.Join(base, "skills")
		diffFixtures(t, dir)
		for _, id := range []string{"word-count", "notes", "http-get"} {
			copySkill(t, filepath.Join("..", "skills", id), filepath.Join(dir, id))
		}
		copySkill(t, filepath.Join("..", "skills", "hello"), filepath.Join(dir, "hello-go"))
		setManifestID(t, filepath.Join(dir, "hello-go"), "hello-go")
		ws := filepath.Join(base, "ws")
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		pol := &policy.Policy{
			Env:           map[string]string{"X": "1"},
			Network:       []string{"127.0.0.1", "169.254.169.254"},
			AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			Files:         []policy.Mount{{Path: "/workspace", HostPath: ws, Access: spec.ReadWrite}},
			// logflood asks for 120 s: on a starved machine its flood outlasts the default
			// ceiling of 30 s, and the engines must not be told apart by the wall clock.
			Limits: spec.Limits{TimeoutMs: 120000},
		}
		return newRuntime(t, Config{SkillDirs: []string{dir}, Policy: pol, Shared: newShared(t, SharedConfig{Engine: engine})})
	}
	native, ref := build(EngineNative), build(EngineExtism)
	for _, s := range native.Skills() {
		if v := s.in().Verified(); v.Status != catalog.StatusActive { // loading left it unchecked
			t.Fatalf("fixture %s is broken: %v", s.ID(), v.Err)
		}
	}

	ctx := context.Background()
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			args := json.RawMessage(strings.ReplaceAll(tc.args, "%SERVER%", srv.URL))
			if tc.args == "" {
				args = nil
			}
			resN, _ := native.Run(ctx, run.Request{Skill: tc.skill, Args: args, Who: testAdmin})
			resE, _ := ref.Run(ctx, run.Request{Skill: tc.skill, Args: args, Who: testAdmin})
			got, want := outcomeOf(resN), outcomeOf(resE)
			if d := tc.diverges; d != nil {
				if got.Kind != d.kind || !strings.Contains(got.Message, d.msg) {
					t.Fatalf("native: %s %q; want %s containing %q", got.Kind, got.Message, d.kind, d.msg)
				}
				t.Logf("diverges by design: native %s %q, extism success=%v %s %q", got.Kind, got.Message, want.Success, want.Kind, want.Message)
				return
			}
			if tc.sameKindOnly {
				if got.Kind == "" {
					t.Fatalf("native succeeded: want kind %s as extism (%q)", want.Kind, want.Message)
				}
				t.Logf("native: %q\nextism: %q", got.Message, want.Message)
				got.Message, want.Message = "", ""
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the engines disagree\nnative: %+v\nextism: %+v", got, want)
			}
		})
	}
}

// copySkill copies a bundled skill's manifest, instructions and module (not its sources).
func copySkill(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"skill.json", "SKILL.md", spec.ModuleFile} {
		data, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// setManifestID renames a copied skill: its manifest's id must match its directory.
func setManifestID(t *testing.T, dir, id string) {
	t.Helper()
	p := filepath.Join(dir, "skill.json")
	var m map[string]any
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = id
	out, _ := json.Marshal(m)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
