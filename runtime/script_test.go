package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// scriptFixture writes a script skill named id into dir: the manifest, and files (relative path →
// content).
func scriptFixture(t testing.TB, dir, id, manifest string, files map[string]string) string {
	t.Helper()
	sd := fixture(t, dir, id, manifest, "")
	for name, content := range files {
		p := filepath.Join(sd, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return sd
}

func TestTypeScriptSkillRuns(t *testing.T) {
	dir := t.TempDir()
	scriptFixture(t, dir, "greet", simple("greet", `"parameters":{"name":{"type":"string","required":true},"times":{"type":"integer","default":2}}`), map[string]string{
		"execute.ts": `import { shout } from "./util";
interface Args { name: string; times: number }
export async function execute(args: Args, ctx: any): Promise<object> {
  ctx.log("greeting " + args.name, "info");
  console.log("from console");
  return { text: shout(args.name).repeat(args.times), env: ctx.env("HOME") };
}`,
		"util.ts": `export const shout = (s: string): string => s.toUpperCase() + "!";`,
	})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	s, err := rt.Skill("greet")
	if err != nil || s.Language() != spec.LangTypeScript {
		t.Fatalf("skill %v, language %q", err, s.Language())
	}
	var events []string
	res, err := rt.Run(context.Background(), run.Request{Skill: "greet", Args: []byte(`{"name":"ada"}`),
		OnEvent: func(e run.Event) { events = append(events, e.Type) }, Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Result) != `{"text":"ADA!ADA!","env":null}` {
		t.Fatalf("result %s", res.Result)
	}
	var msgs []string
	for _, l := range res.Logs {
		msgs = append(msgs, l.Source+":"+l.Message)
	}
	if strings.Join(msgs, "|") != "ctx:greeting ada|console:from console" {
		t.Fatalf("logs %q", msgs)
	}
	if res.Usage.PeakMemoryBytes == 0 || !strings.HasPrefix(res.Digest, "sha256:") || s.ModuleHash() == "" {
		t.Fatalf("usage %+v digest %q hash %q", res.Usage, res.Digest, s.ModuleHash())
	}
	if strings.Join(events, ",") != "status,status,log,log,result" {
		t.Fatalf("events %v", events)
	}
}

func TestScriptSkillErrors(t *testing.T) {
	dir := t.TempDir()
	// Every skill but the one that loops has 30 s (the default ceiling): what each must meet is
	// its own error or limit, however slowly a loaded machine (or -race) gets there, never the
	// clock.
	js := func(id, body, extra string) {
		m := simple(id, `"limits":{"timeoutMs":30000,"memoryMiB":32}`)
		if extra != "" {
			m = simple(id, extra)
		}
		scriptFixture(t, dir, id, m, map[string]string{"execute.js": body})
	}
	js("throws", `export function execute() { throw new TypeError("bad input"); }`, "")
	js("envelope", `export function execute() { return {success: false, error: "said no"}; }`, "")
	js("loops", `export function execute() { for (;;) {} }`, `"limits":{"timeoutMs":500,"memoryMiB":32}`)
	js("bomb", `export function execute() { let a = []; for (;;) a.push(new Array(1e5).fill(a.length)); }`, "")
	js("denied", `export async function execute(args, ctx) { await ctx.fetch("http://127.0.0.1:1/"); }`, "")
	js("caught", `export async function execute(args, ctx) {
  try { await ctx.readFile("/etc/passwd"); } catch (e) { if (!(e instanceof PermissionDenied)) throw e; }
  throw new Error("gave up");
}`, "")
	js("big", `export function execute() { return "x".repeat(5000); }`, `"limits":{"maxOutputBytes":1000}`)
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	tests := []struct {
		id   string
		kind run.ErrorKind
		msg  string
	}{
		{"throws", run.KindSkillError, "TypeError: bad input"},
		{"envelope", run.KindSkillError, "said no"},
		{"loops", run.KindTimeout, "timeout of 500ms"},
		{"bomb", run.KindMemoryLimit, "out of memory"},
		{"denied", run.KindPermissionDenied, "PermissionDenied"},
		{"caught", run.KindPermissionDenied, "gave up"},
		{"big", run.KindOutputLimit, "maxOutputBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			res, err := rt.Run(context.Background(), run.Request{Skill: tt.id, Who: testAdmin})
			var re *run.Error
			if !errors.As(err, &re) || re.Kind != tt.kind || !strings.Contains(re.Message, tt.msg) {
				t.Fatalf("got %v, want kind %s with %q", err, tt.kind, tt.msg)
			}
			if res.Success || res.Error == nil || res.Error.Kind != tt.kind {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

func TestScriptSkillLoadProblems(t *testing.T) {
	dir := t.TempDir()
	scriptFixture(t, dir, "syntax", simple("syntax", ""), map[string]string{"execute.ts": "export function execute( {\n"})
	scriptFixture(t, dir, "escape", simple("escape", ""), map[string]string{"execute.js": `import x from "../other/x.js"; export function execute() { return x; }`})
	scriptFixture(t, dir, "node", simple("node", ""), map[string]string{"execute.js": `import fs from "fs"; export function execute() {}`})
	scriptFixture(t, dir, "two", simple("two", ""), map[string]string{"execute.js": `export function execute() {}`, "execute.py": "def execute(args, ctx): pass\n"})
	scriptFixture(t, dir, "said", simple("said", `"runtime":"javascript"`), map[string]string{"execute.js": `export function execute() { return 1; }`, "execute.py": "def execute(args, ctx): pass\n"})
	scriptFixture(t, dir, "absent", simple("absent", `"runtime":"typescript"`), nil)
	scriptFixture(t, dir, "unknown", simple("unknown", `"runtime":"ruby"`), nil)
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	settled(t, rt)
	tests := []struct{ id, want string }{
		{"syntax", "syntax/execute.ts:2:1"},
		{"escape", `import "../other/x.js"`},
		{"node", `import "fs"`},
		{"two", `runtime: the directory holds execute.py and execute.js`},
		{"absent", "absent/execute.ts: missing"},
		{"unknown", `runtime: "ruby" is not a runtime`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, err := rt.Run(context.Background(), run.Request{Skill: tt.id, Who: testAdmin})
			if !errors.Is(err, run.ErrNotFound) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v, want not_found naming %q, without the host path", err, tt.want)
			}
		})
	}
	res, err := rt.Run(context.Background(), run.Request{Skill: "said", Who: testAdmin})
	if err != nil || string(res.Result) != "1" {
		t.Fatalf("the runtime field picks the file: %v %s", err, res.Result)
	}
}

// A script edited after its version was loaded is never run under that version's grant: its
// runs evaluate the code that was checked until a reload switches to the edited one. A skill
// rewritten while it serves never fails a run.
func TestScriptChangedAfterLoad(t *testing.T) {
	dir := t.TempDir()
	sd := scriptFixture(t, dir, "edit", simple("edit", ""), map[string]string{"execute.js": `export function execute() { return 1; }`})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	if res, err := rt.Run(context.Background(), run.Request{Skill: "edit", Who: testAdmin}); err != nil || string(res.Result) != "1" {
		t.Fatalf("%v %s", err, res.Result)
	}
	must(t, os.WriteFile(filepath.Join(sd, "execute.js"), []byte(`export function execute() { return 2; }`), 0o644))
	if res, err := rt.Run(context.Background(), run.Request{Skill: "edit", Who: testAdmin}); err != nil || string(res.Result) != "1" {
		t.Fatalf("before a reload: %v %s, want the version loaded", err, res.Result)
	}
	must(t, rt.Reload(context.Background()))
	if res, err := rt.Run(context.Background(), run.Request{Skill: "edit", Who: testAdmin}); err != nil || string(res.Result) != "2" {
		t.Fatalf("after reload: %v %s", err, res.Result)
	}
}

// Two runs of one skill get fresh interpreters: nothing a run leaves in its globals reaches the
// next, and Math.random is seeded per run.
func TestScriptRunsAreFresh(t *testing.T) {
	dir := t.TempDir()
	scriptFixture(t, dir, "fresh", simple("fresh", ""), map[string]string{"execute.js": `export function execute() {
  const seen = globalThis.counter || 0; globalThis.counter = seen + 1;
  return { seen, r: Math.random() };
}`})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	var prev struct {
		Seen int
		R    float64
	}
	for i := range 2 {
		res, err := rt.Run(context.Background(), run.Request{Skill: "fresh", Who: testAdmin})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Seen int
			R    float64
		}
		must(t, json.Unmarshal(res.Result, &got))
		if got.Seen != 0 || (i > 0 && got.R == prev.R) {
			t.Fatalf("run %d: %+v after %+v", i, got, prev)
		}
		prev = got
	}
}

// A JavaScript skill's top level is evaluated once (quickjs.Prepare) and every run starts from
// what it built, never from another run's changes; a top level that draws from Math.random must
// differ per run, so it is evaluated by every run.
func TestScriptTopLevelIsEvaluatedOnce(t *testing.T) {
	dir := t.TempDir()
	scriptFixture(t, dir, "table", simple("table", ""), map[string]string{"execute.js": `const squares = Array.from({length: 5}, (_, i) => i * i);
let calls = 0;
export function execute() { calls++; squares.push(0); return {sum: squares.reduce((a, b) => a + b), n: squares.length, calls, r: Math.random()}; }`})
	scriptFixture(t, dir, "drawn", simple("drawn", ""), map[string]string{"execute.js": `const r = Math.random();
export function execute() { return r; }`})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	var rs []string
	for i := range 3 {
		res, err := rt.Run(ctx, run.Request{Skill: "table", Who: testAdmin})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Sum, N, Calls int
			R             float64
		}
		must(t, json.Unmarshal(res.Result, &got))
		if got.Sum != 30 || got.N != 6 || got.Calls != 1 {
			t.Fatalf("run %d = %s: want the top level's state, unchanged by the runs before", i, res.Result)
		}
		rs = append(rs, fmt.Sprint(got.R))
	}
	if rs[0] == rs[1] || rs[1] == rs[2] {
		t.Fatalf("Math.random in execute gave %v: the same in two runs", rs)
	}
	// The bytecode and the prepared bundle were made once, and used by the second and third run.
	if c, h := rt.bytecode.Compiles.Load(), rt.bytecode.Hits.Load(); c != 2 || h != 4 {
		t.Fatalf("compiled %d times, reused %d; want 2 and 4", c, h)
	}
	a, err := rt.Run(ctx, run.Request{Skill: "drawn", Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.Run(ctx, run.Request{Skill: "drawn", Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Result) == string(b.Result) {
		t.Fatalf("a top-level Math.random() gave %s in two runs: it must be drawn in each", a.Result)
	}
}

// A script skill installs as a package (its modules, lib/ and scripts/ included) and runs at once;
// a package whose script does not bundle is refused with the file and line.
func TestInstallScriptPackage(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, Config{SkillDirs: []string{t.TempDir()}})
	files := map[string][]byte{
		"skill.json":            []byte(simple("calc", `"parameters":{"x":{"type":"number","required":true}}`)),
		"execute.ts":            []byte(`import { double } from "./math"; import pad from "leftpad"; export const execute = (a: {x: number}) => pad(String(double(a.x)), 4);`),
		"math.ts":               []byte(`export const double = (n: number) => n * 2;`),
		"lib/leftpad/index.js":  []byte(`export default function (s, n) { return s.padStart(n, "0"); }`),
		"scripts/report.py":     []byte("print('hi')\n"),
		"resources/notes.md":    []byte("# notes\n"),
		"lib/leftpad/README.md": []byte("pads\n"),
	}
	if _, err := rt.Install(ctx, "calc", files, InstallOptions{Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Run(ctx, run.Request{Skill: "calc", Args: []byte(`{"x":21}`), Who: testAdmin})
	if err != nil || string(res.Result) != `"0042"` {
		t.Fatalf("%v %s", err, res.Result)
	}
	files["execute.ts"] = []byte("export const execute = (a: {x: number}) => {\n  return a.x +;\n}")
	_, err = rt.Install(ctx, "calc", files, InstallOptions{Replace: true, Who: testAdmin})
	if !errors.Is(err, spec.ErrInvalidSkill) || !strings.Contains(err.Error(), "execute.ts:2:") {
		t.Fatalf("got %v, want the syntax error with its line", err)
	}
	if _, err := rt.Install(ctx, "other", map[string][]byte{"skill.json": []byte(simple("other", "")), "execute.js": []byte("export const execute = () => 1;"),
		"lib/.hidden.js": []byte("x")}, InstallOptions{Who: testAdmin}); !errors.Is(err, spec.ErrInvalidSkill) || !strings.Contains(err.Error(), "hidden") {
		t.Fatalf("hidden file: %v", err)
	}
}
