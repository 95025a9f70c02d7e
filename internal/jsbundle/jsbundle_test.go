package jsbundle

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// skill writes files (skill-relative path -> content) under a fresh directory and returns it.
func skill(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "skill")
	for rel, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const tsEntry = `import { double, Shape } from "./util";
import { greet } from "./greet.js";
import pad from "leftpad";
import { fmt } from "dates";
interface Args { name: string; n: number }
export async function execute(args: Args, ctx: unknown): Promise<object> {
	const s: Shape = Shape.Square;
	return { hello: greet(args.name), twice: double(args.n), shape: s, padded: pad("x", 3), d: fmt() };
}
`

func TestBuildTypeScript(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{
		"execute.ts":             tsEntry,
		"util.ts":                "export enum Shape { Circle = 1, Square }\nexport const double = (n: number): number => n * 2;\n",
		"greet.js":               "export function greet(n) { return `hi ${n}`; }\n",
		"lib/leftpad/index.js":   "import { rep } from './rep.js';\nexport default function pad(s, n) { return rep(' ', n - s.length) + s; }\n",
		"lib/leftpad/rep.js":     "export const rep = (c, n) => c.repeat(Math.max(0, n));\n",
		"lib/dates/package.json": `{"name":"dates","module":"./esm/main.mjs","main":"./cjs/main.js"}`,
		"lib/dates/esm/main.mjs": "export const fmt = () => 'esm';\n",
		"unused.ts":              "this is not even valid TypeScript {",
	})
	b, err := Build(context.Background(), dir, "execute.ts", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"var __skill = ", "const s = 2", "hi ${n}", "'esm'", ".repeat("} {
		if !strings.Contains(b.Code, want) && !strings.Contains(b.Code, strings.ReplaceAll(want, "'", `"`)) {
			t.Errorf("bundle lacks %q:\n%s", want, b.Code)
		}
	}
	for _, typ := range []string{"interface", ": Args", "Promise<object>"} {
		if strings.Contains(b.Code, typ) {
			t.Errorf("bundle still has the type %q", typ)
		}
	}
	want := []string{"execute.ts", "greet.js", "lib/dates/esm/main.mjs", "lib/dates/package.json", "lib/leftpad/index.js", "lib/leftpad/rep.js", "util.ts"}
	if strings.Join(b.Files, ",") != strings.Join(want, ",") {
		t.Errorf("files = %v, want %v", b.Files, want)
	}
}

func TestBuildLibSingleFileAndMain(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{
		"execute.js":             `import a from "one"; import b from "two"; export function execute() { return a + b; }`,
		"lib/one.js":             "export default 1;",
		"lib/two/package.json":   `{"main":"dist/two.js"}`,
		"lib/two/dist/two.js":    "export default 2;",
		"lib/two/dist/other.js":  "export default 3;",
		"lib/unused/index.js":    "nope(",
		"scripts/report.js":      "console.log('no execute needed');",
		"scripts/lib/unused.txt": "x",
	})
	b, err := Build(context.Background(), dir, "execute.js", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.Files, ","); got != "execute.js,lib/one.js,lib/two/dist/two.js,lib/two/package.json" {
		t.Errorf("files = %s", got)
	}
	if _, err := Build(context.Background(), dir, "scripts/report.js", Options{Program: true}); err != nil {
		t.Errorf("program: %v", err)
	}
}

// refused builds a skill expecting a *Error of kind, and returns it.
func refused(t *testing.T, files map[string]string, entry string, opts Options, kind error) *Error {
	t.Helper()
	dir := skill(t, files)
	return refusedIn(t, dir, entry, opts, kind)
}

func refusedIn(t *testing.T, dir, entry string, opts Options, kind error) *Error {
	t.Helper()
	_, err := Build(context.Background(), dir, entry, opts)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("err = %v, want a *Error of kind %v", err, kind)
	}
	t.Logf("%v", err)
	return e
}

func TestBuildRefusesImports(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, spec string
		kind       error
		msg        string
	}{
		{"parent", "../outside.js", ErrOutside, "leads out of the skill"},
		{"deep parent", "./sub/../../outside.js", ErrOutside, "leads out of the skill"},
		{"absolute", "/etc/passwd", ErrOutside, "absolute"},
		{"node builtin", "fs", ErrImport, "lib/ directory"},
		{"node scheme", "node:fs", ErrImport, "built-in"},
		{"qjs std", "qjs:std", ErrImport, "built-in"},
		{"url", "https://example.com/x.js", ErrImport, "URL"},
		{"bare parent", "lodash/../../outside", ErrOutside, "lib/"},
		{"hidden", "./.env.js", ErrDenied, "hidden"},
		{"hidden dir", "./.git/config.js", ErrDenied, "hidden"},
		{"missing", "./nope.js", ErrNotFound, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := skill(t, map[string]string{
				"sub/keep.txt":   "",
				"execute.js":     "export function execute() { return 1; }\n",
				"helper.js":      "// the import is on line 2\nimport x from " + quote(c.spec) + ";\nexport default x;\n",
				".env.js":        "export default 'secret';",
				".git/config.js": "export default 'secret';",
			})
			os.WriteFile(filepath.Join(filepath.Dir(dir), "outside.js"), []byte("export default 'outside';"), 0o644)
			os.WriteFile(filepath.Join(dir, "execute.js"), []byte("import h from './helper.js';\nexport function execute() { return h; }\n"), 0o644)
			e := refusedIn(t, dir, "execute.js", Options{}, c.kind)
			if e.File != "helper.js" || e.Line != 2 || e.Import != c.spec {
				t.Errorf("file:line = %s:%d import %q, want helper.js:2 import %q", e.File, e.Line, e.Import, c.spec)
			}
			if !strings.Contains(e.Error(), c.msg) {
				t.Errorf("message %q does not say %q", e.Error(), c.msg)
			}
			if c.kind == ErrImport && !strings.Contains(e.Hint, "lib/") {
				t.Errorf("hint %q does not say what a skill may import", e.Hint)
			}
		})
	}
}

func quote(s string) string { return `"` + s + `"` }

func TestBuildRefusesSymlinkOut(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{
		"execute.js": "import s from './secret.js';\nimport l from 'pkg';\nexport function execute() { return s + l; }\n",
		"inner.js":   "export default 'inner';",
	})
	outside := filepath.Join(filepath.Dir(dir), "secret.js")
	os.WriteFile(outside, []byte("export default 'outside';"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "secret.js")); err != nil {
		t.Fatal(err)
	}
	e := refusedIn(t, dir, "execute.js", Options{}, ErrOutside)
	if e.File != "execute.js" || e.Line != 1 || e.Import != "./secret.js" || !strings.Contains(e.Msg, "symlink") {
		t.Errorf("got %+v", e)
	}
	// A symlinked lib/ package directory that leads out is refused too.
	os.Remove(filepath.Join(dir, "secret.js"))
	os.Symlink("inner.js", filepath.Join(dir, "secret.js")) // inside: followed
	os.Mkdir(filepath.Join(dir, "lib"), 0o755)
	os.Symlink(filepath.Dir(dir), filepath.Join(dir, "lib", "pkg"))
	os.WriteFile(filepath.Join(filepath.Dir(dir), "index.js"), []byte("export default 'outside';"), 0o644)
	e = refusedIn(t, dir, "execute.js", Options{}, ErrOutside)
	if e.Import != "pkg" || e.Line != 2 {
		t.Errorf("got %+v", e)
	}
	// The entry itself as a symlink out.
	os.Symlink(outside, filepath.Join(dir, "execute.ts"))
	refusedIn(t, dir, "execute.ts", Options{}, ErrOutside)
}

func TestBuildRefusesNonRegular(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{
		"execute.js": "import f from './fifo.js';\nexport function execute() { return f; }\n",
		"data.txt":   "x",
	})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.js"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan struct{})
	go func() { defer close(done); refusedIn(t, dir, "execute.js", Options{}, ErrDenied) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // a hang guard: the build takes well under a second
		t.Fatal("a FIFO blocked the bundle")
	}
	// A file esbuild has no loader for.
	os.WriteFile(filepath.Join(dir, "execute.js"), []byte("import d from './data.txt';\nexport function execute() { return d; }\n"), 0o644)
	refusedIn(t, dir, "execute.js", Options{}, ErrDenied)
}

func TestBuildNoExecute(t *testing.T) {
	t.Parallel()
	for _, entry := range []string{"execute.ts", "execute.js"} {
		for _, src := range []string{
			"export function run() {}",
			"function execute() {}",
			"export default function execute() {}",
		} {
			e := refused(t, map[string]string{entry: src}, entry, Options{}, ErrNoExecute)
			if e.File != entry || !strings.Contains(e.Hint, "export function execute") {
				t.Errorf("got %+v", e)
			}
		}
	}
	for _, src := range []string{
		"export async function execute(a: number) { return a; }",
		"const execute = () => 1; export { execute };",
		"export { run as execute } from './run';",
	} {
		dir := skill(t, map[string]string{"execute.ts": src, "run.ts": "export const run = 1;"})
		if _, err := Build(context.Background(), dir, "execute.ts", Options{}); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

func TestBuildSyntaxError(t *testing.T) {
	t.Parallel()
	e := refused(t, map[string]string{
		"execute.ts": "import { f } from './broken';\nexport function execute() { return f(); }\n",
		"broken.ts":  "export function f() {\n  return 1 +;\n}\n",
	}, "execute.ts", Options{}, ErrSyntax)
	if e.File != "broken.ts" || e.Line != 2 || e.Column == 0 {
		t.Errorf("got %+v", e)
	}
}

func TestBuildBounds(t *testing.T) {
	t.Parallel()
	big := "export const s = \"" + strings.Repeat("a", 4000) + "\";\n"
	files := map[string]string{"execute.js": "import {s} from './a.js';\nimport {s as t} from './b.js';\nexport function execute() { return s + t; }\n", "a.js": big, "b.js": big}
	if _, err := Build(context.Background(), skill(t, files), "execute.js", Options{MaxSourceBytes: 9000}); err != nil {
		t.Fatalf("under the byte bound: %v", err)
	}
	if e := refused(t, files, "execute.js", Options{MaxSourceBytes: 7000}, ErrTooLarge); !strings.Contains(e.Msg, "reading b.js") && !strings.Contains(e.Msg, "reading a.js") {
		t.Errorf("the message does not name the file: %v", e)
	}
	if _, err := Build(context.Background(), skill(t, files), "execute.js", Options{MaxFiles: 3}); err != nil {
		t.Fatalf("at the file bound: %v", err)
	}
	refused(t, files, "execute.js", Options{MaxFiles: 2}, ErrTooLarge)
	if _, err := Build(context.Background(), skill(t, files), "execute.js", Options{MaxOutputBytes: 10000}); err != nil {
		t.Fatalf("under the output bound: %v", err)
	}
	refused(t, files, "execute.js", Options{MaxOutputBytes: 8000}, ErrTooLarge)
}

func TestBuildContext(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{"execute.js": "export function execute() {}"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, dir, "execute.js", Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v", err)
	}
	// A deadline that ends during the build: many files, each read checks the context.
	files := map[string]string{}
	var imp strings.Builder
	for i := range 400 {
		name := "m" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + ".ts"
		files[name] = "export const v = " + itoa(i) + ";\n"
		imp.WriteString("import {v as v" + itoa(i) + "} from './" + name + "';\n")
	}
	files["execute.ts"] = imp.String() + "export function execute() { return v0; }\n"
	dir = skill(t, files)
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := Build(ctx, dir, "execute.ts", Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: err = %v", err)
	}
	if _, err := Build(context.Background(), dir, "execute.ts", Options{}); err != nil {
		t.Errorf("without a deadline: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestBuildBadEntry(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{"execute.js": "export function execute() {}"})
	for _, entry := range []string{"", "/etc/passwd", "../x.js", "a\\b.js"} {
		refusedIn(t, dir, entry, Options{}, ErrNotFound)
	}
	refusedIn(t, dir, ".hidden.js", Options{}, ErrDenied)
	refusedIn(t, dir, "missing.js", Options{}, ErrNotFound)
}

// TestBuildRunsInNode evaluates the bundle as a plain script, as the sandbox's interpreter will,
// and calls __skill.execute: the IIFE is self-contained and exposes execute.
func TestBuildRunsInNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("node is not on PATH")
		}
		t.Skip("node is not on PATH")
	}
	dir := skill(t, map[string]string{
		"execute.ts":             tsEntry,
		"util.ts":                "export enum Shape { Circle = 1, Square }\nexport const double = (n: number): number => n * 2;\n",
		"greet.js":               "export function greet(n) { return `hi ${n}`; }\n",
		"lib/leftpad/index.js":   "import { rep } from './rep.js';\nexport default function pad(s, n) { return rep(' ', n - s.length) + s; }\n",
		"lib/leftpad/rep.js":     "export const rep = (c, n) => c.repeat(Math.max(0, n));\n",
		"lib/dates/package.json": `{"module":"./esm/main.mjs"}`,
		"lib/dates/esm/main.mjs": "export const fmt = () => 'esm';\n",
	})
	b, err := Build(context.Background(), dir, "execute.ts", Options{})
	if err != nil {
		t.Fatal(err)
	}
	script := "const vm = require('vm'); const c = vm.createContext({});\n" +
		"vm.runInContext(" + strconv.Quote(b.Code) + ", c);\n" +
		"vm.runInContext('__skill.execute({name: \"bob\", n: 21})', c).then(r => console.log(JSON.stringify(r)));\n"
	out, err := exec.Command(node, "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	want := `{"hello":"hi bob","twice":42,"shape":2,"padded":"  x","d":"esm"}`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("execute returned %s, want %s", got, want)
	}
}

// TestBuildDotImport: "." and "./index" name the same file, read once.
func TestBuildDotImport(t *testing.T) {
	t.Parallel()
	dir := skill(t, map[string]string{
		"execute.js": "import a from '.';\nimport b from './index';\nexport function execute() { return a + b; }\n",
		"index.ts":   "export default 1;\n",
	})
	b, err := Build(context.Background(), dir, "execute.js", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.Files, ","); got != "execute.js,index.ts" {
		t.Errorf("files = %s", got)
	}
}
