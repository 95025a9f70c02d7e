package runtime

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// TestHostileScriptsAreContained runs scripts that attack the sandbox or its limits: each ends
// with its kind, the host goes on, and a well-behaved run after them still works.
func TestHostileScriptsAreContained(t *testing.T) {
	dir := t.TempDir()
	hostile := map[string]string{
		"loop-in-job": `export async function execute() { await null; for (;;) {} }`,
		"recursion":   `function f(n) { return f(n + 1) + 1; } export function execute() { return f(0); }`,
		"regexp-bomb": `export function execute() { return /^(a+)+$/.test("a".repeat(40) + "b"); }`,
		"log-flood":   `export function execute(args, ctx) { for (let i = 0; i < 5000; i++) ctx.log("x".repeat(100)); return "done"; }`,
		"print-flood": `export function execute() { for (let i = 0; i < 20000; i++) print("y".repeat(100)); return "done"; }`,
		"fetch-flood": `export async function execute(args, ctx) { for (let i = 0; i < 100; i++) { try { await ctx.fetch("https://127.0.0.1:1/"); } catch (e) { if (e.name === "LimitExceeded") throw e; } } }`,
		// esbuild turns require into a shim that throws: a bundle cannot load QuickJS's std or os.
		"no-std": `export function execute() {
  let req; try { const name = "st" + "d"; req = require(name); } catch (e) { req = e.message; }
  return [typeof std, typeof os, typeof process, typeof globalThis.scriptArgs, req];
}`,
		"frozen-ctx":   `export function execute(args, ctx) { "use strict"; ctx.env = () => "stolen"; }`,
		"big-request":  `export async function execute(args, ctx) { await ctx.writeFile("/skill/x", "z".repeat(20 << 20)); }`,
		"string-bomb":  `export function execute() { let s = "x"; for (;;) s = (s + s).split("").join(""); }`,
		"array-buffer": `export function execute() { const bufs = []; for (;;) bufs.push(new ArrayBuffer(1 << 20)); }`,
		// The top level is evaluated once for every run (quickjs.Prepare): each of these must
		// still meet its limit, in every run, as if it were evaluated by the run itself.
		"top-loop":   `for (;;) {} export function execute() { return 1; }`,
		"top-memory": `const bufs = []; for (;;) bufs.push(new ArrayBuffer(1 << 20)); export function execute() { return 1; }`,
		"top-throw":  `throw new RangeError("at load"); export function execute() { return 1; }`,
		"top-log":    `console.log("loading"); export function execute() { return 1; }`,
	}
	for id, src := range hostile {
		// Each run must meet the limit it is about, however slowly a loaded machine (or -race)
		// gets there: only the two that must time out have a short timeout; every other one has
		// 30 s (the default ceiling), so a memory or log bound is never raced by the clock.
		extra := `"limits":{"timeoutMs":30000,"memoryMiB":32,"maxLogBytes":65536}`
		switch id {
		case "loop-in-job", "regexp-bomb", "top-loop": // never end by themselves: only the clock stops them
			extra = `"limits":{"timeoutMs":1500,"memoryMiB":32,"maxLogBytes":65536}`
		case "fetch-flood":
			extra += `,"permissions":{"network":["127.0.0.1"]}`
		case "big-request": // room for the request itself: the broker's bound refuses it
			extra = `"limits":{"timeoutMs":30000,"memoryMiB":256}`
		}
		scriptFixture(t, dir, id, simple(id, extra), map[string]string{"execute.js": src})
	}
	scriptFixture(t, dir, "ok", simple("ok", ""), map[string]string{"execute.js": `export const execute = () => "fine";`})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Network: []string{"127.0.0.1"},
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Limits: spec.Limits{MemoryMiB: 256}}})
	ctx := context.Background()
	tests := []struct {
		id    string
		kind  run.ErrorKind // "" : succeeds
		check func(t *testing.T, res *run.Result)
	}{
		{"loop-in-job", run.KindTimeout, nil},
		{"recursion", run.KindSkillError, func(t *testing.T, res *run.Result) {
			if !strings.Contains(res.Error.Message, "stack overflow") {
				t.Errorf("message %q", res.Error.Message)
			}
		}},
		{"regexp-bomb", run.KindTimeout, nil},
		{"log-flood", "", func(t *testing.T, res *run.Result) {
			if res.LogsDropped == 0 || len(res.Logs) > 1000 {
				t.Errorf("%d logs kept, %d dropped", len(res.Logs), res.LogsDropped)
			}
		}},
		{"print-flood", "", func(t *testing.T, res *run.Result) {
			if len(res.Logs) > 1000 || res.LogsDropped == 0 {
				t.Errorf("%d logs kept, %d dropped", len(res.Logs), res.LogsDropped)
			}
		}},
		{"fetch-flood", run.KindSkillError, func(t *testing.T, res *run.Result) {
			if !strings.Contains(res.Error.Message, "LimitExceeded") {
				t.Errorf("message %q", res.Error.Message)
			}
		}},
		{"no-std", "", func(t *testing.T, res *run.Result) {
			if string(res.Result) != `["undefined","undefined","undefined","undefined","Dynamic require of \"std\" is not supported"]` {
				t.Errorf("globals %s", res.Result)
			}
		}},
		{"frozen-ctx", run.KindSkillError, func(t *testing.T, res *run.Result) {
			if !strings.Contains(res.Error.Message, "TypeError") {
				t.Errorf("message %q", res.Error.Message)
			}
		}},
		{"big-request", run.KindSkillError, func(t *testing.T, res *run.Result) {
			if !strings.Contains(res.Error.Message, "LimitExceeded") {
				t.Errorf("message %q", res.Error.Message)
			}
		}},
		{"string-bomb", run.KindMemoryLimit, nil},
		{"array-buffer", run.KindMemoryLimit, nil},
		{"top-loop", run.KindTimeout, nil},
		{"top-memory", run.KindMemoryLimit, nil},
		{"top-throw", run.KindSkillError, func(t *testing.T, res *run.Result) {
			if !strings.Contains(res.Error.Message, "RangeError: at load") {
				t.Errorf("message %q", res.Error.Message)
			}
		}},
		{"top-log", "", func(t *testing.T, res *run.Result) {
			if string(res.Result) != "1" || len(res.Logs) != 1 || res.Logs[0].Message != "loading" {
				t.Errorf("result %s, logs %+v: want 1 and the top level's line, in every run", res.Result, res.Logs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			runs := 1
			if strings.HasPrefix(tt.id, "top-") {
				runs = 2 // the first prepares the bundle (or finds it cannot be), the second uses that
			}
			for range runs {
				res, err := rt.Run(ctx, run.Request{Skill: tt.id, Who: testAdmin})
				switch {
				case tt.kind == "" && err != nil:
					t.Fatalf("%v", err)
				case tt.kind != "":
					var re *run.Error
					if !errors.As(err, &re) || re.Kind != tt.kind {
						t.Fatalf("got %v (result %s), want kind %s", err, res.Result, tt.kind)
					}
				}
				if tt.check != nil {
					tt.check(t, res)
				}
			}
		})
	}
	if res, err := rt.Run(ctx, run.Request{Skill: "ok", Who: testAdmin}); err != nil || string(res.Result) != `"fine"` {
		t.Fatalf("after the hostile runs: %v %s", err, res.Result)
	}
}
