package cpython

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

func TestExecute(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Method)
		fmt.Fprintf(w, `{"path":%q,"type":%q}`, r.URL.Path, r.Header.Get("Content-Type"))
	}))
	defer srv.Close()
	data := t.TempDir()
	g := loopbackGrant(t, "127.0.0.1")
	g.Env = map[string]string{"REGION": "eu"}
	g.Mounts = []hostfuncs.Mount{{Path: "/data", Dir: data, Writable: true}}
	g.Limits.MaxFileBytes, g.Limits.MaxWriteBytes = 1<<20, 1<<20
	for _, tt := range []struct {
		name, src, args, want string
		files                 map[string]string
	}{
		{"env", `def execute(args, ctx):
    return {"sum": args["a"] + args["b"], "region": ctx.env("REGION"), "missing": ctx.env("NOPE")}`,
			`{"a":1,"b":2}`, `{"sum":3,"region":"eu","missing":null}`, nil},
		{"fetch", `def execute(args, ctx):
    r = ctx.fetch(args["url"] + "/x", method="post", body={"a": 1})
    return {"status": r.status, "ok": r.ok, "echo": r.headers["x-echo"], "j": r.json()}`,
			`{"url":"` + srv.URL + `"}`, `{"status":200,"ok":true,"echo":"POST","j":{"path":"/x","type":"application/json"}}`, nil},
		{"files", `def execute(args, ctx):
    ctx.write_file("/data/t.txt", "héllo")
    ctx.write_file("/data/b.bin", bytes([0, 255, 1, 2]))
    return [ctx.read_file("/data/t.txt"), list(ctx.read_file("/data/b.bin", binary=True))]`,
			`null`, `["héllo",[0,255,1,2]]`, nil},
		{"none", "def execute(args, ctx):\n    pass", ``, `null`, nil},
		{"siblings and lib", `import helper, vendored.mod
def execute(args, ctx):
    return [helper.twice(args), vendored.mod.NAME]`, `21`, `[42,"vendored"]`,
			map[string]string{"helper.py": "def twice(x):\n    return 2 * x\n", "lib/vendored/__init__.py": "", "lib/vendored/mod.py": "NAME = 'vendored'\n"}},
		{"async", `async def twice(x):
    return 2 * x
async def execute(args, ctx):
    return await twice(args)`, `4`, `8`, nil},
		{"envelope", `def execute(args, ctx):
    return {"success": True, "result": [1, 2.5, "x"]}`, ``, `{"success":true,"result":[1,2.5,"x"]}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"execute.py": tt.src}
			for k, v := range tt.files {
				files[k] = v
			}
			res, err := Run(context.Background(), compiledFor(t, 1024), Program{Dir: skillDir(t, files), Args: []byte(tt.args)}, newHost(t, g))
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != tt.want {
				t.Fatalf("value = %s, want %s", res.Value, tt.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(data, "b.bin")); err != nil || string(b) != "\x00\xff\x01\x02" {
		t.Fatalf("b.bin = %q, %v", b, err)
	}
}

func TestSkillError(t *testing.T) {
	for _, tt := range []struct{ name, src, wantName, wantMsg string }{
		{"raise", "def execute(args, ctx):\n    helper()\ndef helper():\n    raise ValueError('boom')\n", "ValueError", "boom"},
		{"no execute", "x = 1\n", "TypeError", "/skill/execute.py defines no function execute(args, ctx)"},
		{"syntax", "def execute(args, ctx)\n    return 1\n", "SyntaxError", "expected ':'"},
		{"not JSON", "def execute(args, ctx):\n    return {1, 2}\n", "TypeError", "execute's result is not JSON-serialisable"},
		{"NaN", "def execute(args, ctx):\n    return [float('nan')]\n", "TypeError", "Out of range float values are not JSON compliant"},
		{"bad str", "class E(Exception):\n    def __str__(self):\n        raise ValueError\ndef execute(args, ctx):\n    raise E()\n", "E", "str() failed"},
		{"long message", "def execute(args, ctx):\n    raise ValueError('m' * 100000)\n", "ValueError", "mmmm [cut]"},
		{"exit", "import sys\ndef execute(args, ctx):\n    sys.exit(3)\n", "SystemExit", "3"},
		{"event loop", "import types\n@types.coroutine\ndef wait():\n    yield\nasync def execute(args, ctx):\n    await wait()\n", "RuntimeError", "needs an event loop"},
		{"os._exit", "import os\ndef execute(args, ctx):\n    os._exit(4)\n", "", "the skill exited (status 4) before execute returned"},
		// Deeper than any reader on the host takes: the skill's doing, not the host's. Encoding
		// it recurses in C, past the call stack's bound (interrupt.StackBytes) before the
		// driver's own depth check (maxResultDepth) could see it.
		{"too deep", "import sys\ndef execute(args, ctx):\n    sys.setrecursionlimit(100000)\n    v = []\n    for _ in range(20000):\n        v = [v]\n    return v\n", "RecursionError", "stack overflow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, &hostfuncs.Grant{})
			_, err := runSkill(t, context.Background(), h, tt.src, `{}`)
			e := wantKind(t, err, scripterr.SkillError)
			if e.Name != tt.wantName || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("error = %q %q, want %q %q", e.Name, e.Message, tt.wantName, tt.wantMsg)
			}
			if tt.name != "raise" {
				return
			}
			// The traceback goes to the logs, the skill's frames only.
			var tb []string
			for _, l := range h.Lines() {
				if l.Source == "stderr" {
					tb = append(tb, l.Message)
				}
			}
			got := strings.Join(tb, "\n")
			if !strings.HasPrefix(got, "Traceback") || !strings.Contains(got, `"/skill/execute.py", line 4, in helper`) ||
				!strings.HasSuffix(got, "ValueError: boom") || strings.Contains(got, "skillbox.py") {
				t.Fatalf("traceback in the logs:\n%s", got)
			}
		})
	}
}

func TestPermissionDenied(t *testing.T) {
	g := &hostfuncs.Grant{Limits: hostfuncs.Limits{MaxFetches: 1, MaxFetchBytes: 1 << 10}}
	// Caught: the skill sees the class and carries on.
	res, err := runSkill(t, context.Background(), newHost(t, g), `from skillbox import PermissionDenied, SkillboxError
def execute(args, ctx):
    try:
        ctx.fetch("http://127.0.0.1:1/")
        return "fetched"
    except PermissionDenied as e:
        return [type(e).__name__, e.status, isinstance(e, SkillboxError)]`, `{}`)
	if err != nil || string(res.Value) != `["PermissionDenied","denied",true]` {
		t.Fatalf("caught: %s, %v", res.Value, err)
	}
	// Uncaught: the run ends as permission_denied.
	_, err = runSkill(t, context.Background(), newHost(t, g), "def execute(args, ctx):\n    return ctx.read_file('/etc/passwd')\n", `{}`)
	if e := wantKind(t, err, scripterr.PermissionDenied); e.Name != "PermissionDenied" {
		t.Fatalf("name = %q", e.Name)
	}
}

func TestLogs(t *testing.T) {
	h := newHost(t, &hostfuncs.Grant{})
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{
		Dir: skillDir(t, map[string]string{"execute.py": `import sys
def execute(args, ctx):
    print("hello", 1, {"a": 2})
    print("bad", file=sys.stderr)
    ctx.log("note", level="warn")
    for i in range(1000):
        print("x" * 100)
    print("no newline", end="")
    return 1`}),
		Limits: Limits{MaxOutputBytes: 1000},
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	got := h.Lines()
	want := []logLine{{Level: "info", Source: "stdout", Message: `hello 1 {'a': 2}`}, {Level: "error", Source: "stderr", Message: "bad"}, {Level: "warn", Source: "ctx", Message: "note"}}
	if len(got) < len(want) {
		t.Fatalf("logs = %q", got)
	}
	for i, w := range want {
		if got[i] != w {
			t.Fatalf("log %d = %q, want %q", i, got[i], w)
		}
	}
	// 1000 bytes of output: "hello 1 {'a': 2}\n" (17), "bad\n" (4), 9 lines of 101 bytes and
	// the unterminated last line (11); the other 991 lines are dropped.
	if n := len(got) - 3; n != 10 || res.DroppedLines != 991 || got[len(got)-1].Message != "no newline" {
		t.Fatalf("output lines kept %d, dropped %d, last %q; want 10, 991 and the unterminated line", n, res.DroppedLines, got[len(got)-1])
	}
	_, err = runSkill(t, context.Background(), h, "def execute(args, ctx):\n    ctx.log('x', 'loud')\n", `{}`)
	if e := wantKind(t, err, scripterr.SkillError); e.Name != "InvalidRequest" || !strings.Contains(e.Message, "use debug, info, warn or error") {
		t.Fatalf("bad level: %v", err)
	}
}

func TestScript(t *testing.T) {
	dir := skillDir(t, map[string]string{
		"scripts/report.py": `import argparse, sys, util
p = argparse.ArgumentParser()
p.add_argument("name")
p.add_argument("--times", type=int, default=1)
a = p.parse_args()
data = sys.stdin.read()
print(util.greet(a.name) * a.times, len(data))
print("to stderr", file=sys.stderr)
sys.exit(3)
`,
		"scripts/util.py": "def greet(n):\n    return 'hi ' + n + ';'\n",
		"scripts/fail.py": "raise KeyError('k')\n",
		"scripts/loud.py": "import sys\nsys.stdout.write('y' * 5000)\nsys.stderr.write('z' * 10)\n",
		"scripts/run.sh":  "echo hi\n",
	})
	c := compiledFor(t, 1024)
	h := newHost(t, &hostfuncs.Grant{})
	res, err := Run(context.Background(), c, Program{Dir: dir, Script: "scripts/report.py", Argv: []string{"bob", "--times", "2"}, Stdin: []byte("12345")}, h)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || string(res.Stdout) != "hi bob;hi bob; 5\n" || string(res.Stderr) != "to stderr\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res, err = Run(context.Background(), c, Program{Dir: dir, Script: "scripts/fail.py"}, h)
	if err != nil || res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "KeyError: 'k'") || !strings.HasPrefix(string(res.Stderr), "Traceback") {
		t.Fatalf("fail.py: exit %d, stderr %q, %v", res.ExitCode, res.Stderr, err)
	}
	res, err = Run(context.Background(), c, Program{Dir: dir, Script: "scripts/loud.py", Limits: Limits{MaxOutputBytes: 1000}}, h)
	if err != nil || res.ExitCode != 0 || len(res.Stdout) != 1000 || res.StdoutDropped != 4000 || string(res.Stderr) != "zzzzzzzzzz" {
		t.Fatalf("loud.py: exit %d, %d bytes out (%d dropped), stderr %q, %v", res.ExitCode, len(res.Stdout), res.StdoutDropped, res.Stderr, err)
	}
	if len(h.Lines()) != 0 {
		t.Fatalf("a script's output went to the logs: %q", h.Lines())
	}
	_, err = Run(context.Background(), c, Program{Dir: dir, Script: "scripts/run.sh"}, h)
	if err == nil || !strings.Contains(err.Error(), `Program.Script "scripts/run.sh": only Python (.py) files run`) {
		t.Fatalf("run.sh: %v", err)
	}
}

func TestProgramErrors(t *testing.T) {
	c := compiledFor(t, 1024)
	dir := skillDir(t, map[string]string{"execute.py": "def execute(a, c):\n    return 1\n"})
	for _, tt := range []struct {
		p    Program
		want string
	}{
		{Program{Dir: dir, Entry: "../execute.py"}, `Program.Entry "../execute.py": give a slash-separated path inside the skill's directory`},
		{Program{Dir: dir, Args: []byte("{")}, "Program.Args is not valid JSON"},
		{Program{Dir: filepath.Join(dir, "nope")}, "Program.Dir: the skill's directory"},
		{Program{Dir: dir, Script: "x.py", Argv: []string{"a\x00b"}}, "Program.Argv[0] holds a NUL byte"},
	} {
		_, err := Run(context.Background(), c, tt.p, newHost(t, &hostfuncs.Grant{}))
		var e *scripterr.Error
		if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("err = %v, want one that says %q", err, tt.want)
		}
	}
}

// The mount hook adds the policy's mounts after the standard library and the skill: a data
// directory read-only, a private /tmp writable (tempfile finds it).
func TestFSConfigHook(t *testing.T) {
	data := skillDir(t, map[string]string{"in.csv": "a,b\n1,2\n"})
	tmp := t.TempDir()
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{
		Dir: skillDir(t, map[string]string{"execute.py": `import csv, os, tempfile
def execute(args, ctx):
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write("scratch")
    with open("/data/in.csv") as f:
        return [list(csv.DictReader(f)), os.listdir("/tmp") != []]`}),
		FSConfig: func(f wazero.FSConfig) wazero.FSConfig {
			return f.WithReadOnlyDirMount(data, "/data").WithDirMount(tmp, "/tmp")
		},
	}, newHost(t, &hostfuncs.Grant{}))
	if err != nil || string(res.Value) != `[[{"a":"1","b":"2"}],true]` {
		t.Fatalf("value %s, %v", res.Value, err)
	}
	if files, _ := os.ReadDir(tmp); len(files) != 1 {
		t.Fatalf("/tmp holds %d files, want the one tempfile wrote", len(files))
	}
}

// Runs of one Compiled in parallel each see their own arguments, host and modules.
func TestConcurrentRuns(t *testing.T) {
	c := compiledFor(t, 1024)
	dir := skillDir(t, map[string]string{"execute.py": `import json
def execute(args, ctx):
    seen = hasattr(json, "mine")
    json.mine = args["i"]
    return [seen, ctx.env("W"), args["i"]]`})
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			for i := 0; i < 5; i++ {
				g := &hostfuncs.Grant{Env: map[string]string{"W": fmt.Sprint(w)}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 10}}
				res, err := Run(context.Background(), c, Program{Dir: dir, Args: []byte(fmt.Sprintf(`{"i":%d}`, i))}, newHost(t, g))
				if want := fmt.Sprintf(`[false,"%d",%d]`, w, i); err != nil || string(res.Value) != want {
					errs <- fmt.Errorf("worker %d run %d: %s, %v; want %s", w, i, res.Value, err, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestClosed(t *testing.T) {
	c, err := Compile(context.Background(), testConfig(t, 1024))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	dir := skillDir(t, map[string]string{"execute.py": "def execute(a, c):\n    return 1\n"})
	if _, err := Run(context.Background(), c, Program{Dir: dir}, newHost(t, &hostfuncs.Grant{})); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, compiledFor(t, 1024), Program{Dir: dir}, newHost(t, &hostfuncs.Grant{}))
	if e := wantKind(t, err, scripterr.Timeout); !errors.Is(e, context.Canceled) {
		t.Fatalf("err = %v, does not unwrap to context.Canceled", err)
	}
}

// jsonDepth counts arrays and objects, never brackets inside strings or escaped quotes.
func TestJSONDepth(t *testing.T) {
	for doc, want := range map[string]int{
		`1`: 0, `[]`: 1, `{"a":[[1]]}`: 3, `["[[[", "\"[[", {}]`: 2, `[[],[[]]]`: 3, `"\\"`: 0,
	} {
		if got := jsonDepth([]byte(doc)); got != want {
			t.Errorf("jsonDepth(%s) = %d, want %d", doc, got, want)
		}
	}
}
