package cpython

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
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
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, &hostfuncs.Grant{})
			_, err := runSkill(t, context.Background(), h, tt.src, `{}`)
			e := wantKind(t, err, KindSkillError)
			if e.Name != tt.wantName || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("error = %q %q, want %q %q", e.Name, e.Message, tt.wantName, tt.wantMsg)
			}
			if tt.name != "raise" {
				return
			}
			// The traceback goes to the logs, the skill's frames only.
			var tb []string
			for _, l := range h.lines() {
				if l.source == "stderr" {
					tb = append(tb, l.message)
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
	if e := wantKind(t, err, KindPermissionDenied); e.Name != "PermissionDenied" {
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
	got := h.lines()
	want := []logLine{{"info", "stdout", `hello 1 {'a': 2}`}, {"error", "stderr", "bad"}, {"warn", "ctx", "note"}}
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
	if n := len(got) - 3; n != 10 || res.DroppedLines != 991 || got[len(got)-1].message != "no newline" {
		t.Fatalf("output lines kept %d, dropped %d, last %q; want 10, 991 and the unterminated line", n, res.DroppedLines, got[len(got)-1])
	}
	_, err = runSkill(t, context.Background(), h, "def execute(args, ctx):\n    ctx.log('x', 'loud')\n", `{}`)
	if e := wantKind(t, err, KindSkillError); e.Name != "InvalidRequest" || !strings.Contains(e.Message, "use debug, info, warn or error") {
		t.Fatalf("bad level: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	for _, src := range []string{
		"def execute(args, ctx):\n    while True:\n        pass\n",
		"import time\ndef execute(args, ctx):\n    time.sleep(3600)\n",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		_, err := runSkill(t, ctx, newHost(t, &hostfuncs.Grant{}), src, `{}`)
		cancel()
		if e := wantKind(t, err, KindTimeout); !errors.Is(e, context.DeadlineExceeded) {
			t.Fatalf("err = %v, does not unwrap to the deadline", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("stopped after %v", d)
		}
	}
}

// time.sleep sleeps: CPython's absolute-time clock_nanosleep reaches poll_oneoff as an
// absolute clock subscription, which wazero's own poll_oneoff refuses with ENOTSUP.
func TestSleep(t *testing.T) {
	res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), `import time
def execute(args, ctx):
    t0 = time.monotonic(); w0 = time.time()
    time.sleep(0.05)
    return [time.monotonic() - t0, time.time() - w0, w0 > 1.7e9]`, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var v []any
	if err := json.Unmarshal(res.Value, &v); err != nil || len(v) != 3 {
		t.Fatalf("value %s, %v", res.Value, err)
	}
	if mono, wall := v[0].(float64), v[1].(float64); mono < 0.05 || mono > 2 || wall < 0.04 || v[2] != true {
		t.Fatalf("slept %v s monotonic, %v s wall, real clock %v", mono, wall, v[2])
	}
}

func TestMemoryLimit(t *testing.T) {
	c := compiledFor(t, 512) // 32 MiB
	for _, src := range []string{
		"def execute(args, ctx):\n    a = []\n    while True:\n        a.append(' ' * (1 << 20))\n",
		"def execute(args, ctx):\n    return len(bytearray(1 << 30))\n",
		"def execute(args, ctx):\n    d = {}\n    i = 0\n    while True:\n        d[i] = [i]\n        i += 1\n",
	} {
		_, err := Run(context.Background(), c, Program{Dir: skillDir(t, map[string]string{"execute.py": src})}, newHost(t, &hostfuncs.Grant{}))
		wantKind(t, err, KindMemoryLimit)
	}
	// Caught, the skill recovers and returns: the run is not a failure.
	res, err := Run(context.Background(), c, Program{Dir: skillDir(t, map[string]string{"execute.py": `def execute(args, ctx):
    try:
        a = []
        while True:
            a.append(' ' * (1 << 20))
    except MemoryError:
        a = None
        return "recovered"`})}, newHost(t, &hostfuncs.Grant{}))
	if err != nil || string(res.Value) != `"recovered"` {
		t.Fatalf("caught: %s, %v", res.Value, err)
	}
}

func TestRecursion(t *testing.T) {
	// Python's own limit: a RecursionError, an exception like any other.
	_, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), "def f(n):\n    return f(n + 1)\ndef execute(args, ctx):\n    return f(0)\n", `{}`)
	if e := wantKind(t, err, KindSkillError); e.Name != "RecursionError" {
		t.Fatalf("err = %v", err)
	}
	// Past the C stack (the limit raised, recursion through C: repr of nested lists): the stack
	// placed first makes it a trap, not a corruption of the interpreter's data.
	_, err = runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), `import sys
def execute(args, ctx):
    sys.setrecursionlimit(1000000)
    l = []
    for i in range(200000):
        l = [l]
    return len(repr(l))`, `{}`)
	if e := wantKind(t, err, KindSkillError); !strings.Contains(e.Message, "stack overflow") {
		t.Fatalf("err = %v", err)
	}
}

// The snapshot froze random's state; every run reseeds it (and os.urandom is the host's). The
// str-hash secret stays the snapshot's (see the package doc): the same in every run of a build.
func TestRandomDiffers(t *testing.T) {
	src := "import random, os\ndef execute(args, ctx):\n    return [random.random(), random.getrandbits(64), os.urandom(8).hex(), hash('abc')]\n"
	var prev []any
	for i := 0; i < 2; i++ {
		res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), src, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		var v []any
		if err := json.Unmarshal(res.Value, &v); err != nil || len(v) != 4 {
			t.Fatalf("value %s, %v", res.Value, err)
		}
		if prev != nil && v[3] != prev[3] {
			t.Fatalf("hash('abc') changed between runs of one build: %v, %v", prev[3], v[3])
		}
		for j := 0; prev != nil && j < 3; j++ {
			if v[j] == prev[j] {
				t.Fatalf("two runs drew the same value %d: %v", j, v[j])
			}
		}
		prev = v
	}
}

// What can never work in the sandbox fails with an error that says so.
func TestSandbox(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := skillDir(t, map[string]string{"data.txt": "mine"})
	if err := os.Symlink(secret, filepath.Join(dir, "leak")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SKILLBOX_HOST_SECRET", "host-secret")
	for _, tt := range []struct{ name, code, want string }{
		{"socket", "import socket\nsocket.socket()", "OSError: sockets are not available in the Skillbox sandbox"},
		{"connect", "import socket\nsocket.create_connection(('127.0.0.1', 80))", "OSError: sockets are not available"},
		{"urlopen", "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:1/')", "sockets are not available"},
		{"subprocess", "import subprocess\nsubprocess.run(['ls'])", "wasi does not support processes"},
		{"os.system", "import os\nos.system('ls')", "AttributeError"},
		{"ctypes", "import ctypes", "ModuleNotFoundError: module 'ctypes' is not available in the Skillbox sandbox: a skill cannot load native code"},
		{"multiprocessing", "import multiprocessing", "module 'multiprocessing' is not available in the Skillbox sandbox: there are no processes"},
		{"asyncio", "import asyncio", "module 'asyncio' is not available"},
		{"thread", "import threading\nthreading.Thread(target=print).start()", "RuntimeError: threads are not available in the Skillbox sandbox"},
		{"_thread", "import _thread\n_thread.start_new_thread(print, ())", "RuntimeError: threads are not available"},
		{"open outside", "open('/etc/passwd')", "PermissionError: [Errno 76] Capabilities insufficient: '/etc/passwd'"},
		{"symlink out", "print(open('/skill/leak').read())", "Error"},
		{"write the skill", "open('/skill/new.txt', 'w')", "Error"},
		{"read the skill", "print(open('/skill/data.txt').read())", "mine"},
		{"environment", "import os\nprint(dict(os.environ), os.getenv('SKILLBOX_HOST_SECRET'))", "{} None"},
		{"argv", "import sys\nprint(sys.argv)", "['/skill/p.py', 'a1']"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "p.py"), []byte(tt.code+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), compiledFor(t, 1024), Program{Dir: dir, Script: "p.py", Argv: []string{"a1"}}, newHost(t, &hostfuncs.Grant{}))
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Stdout) + string(res.Stderr)
			if !strings.Contains(out, tt.want) || strings.Contains(out, "secret\n") {
				t.Fatalf("exit %d, output:\n%s\nwant it to contain %q", res.ExitCode, out, tt.want)
			}
		})
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
	if len(h.lines()) != 0 {
		t.Fatalf("a script's output went to the logs: %q", h.lines())
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
		var e *Error
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

func TestHostCallTimeout(t *testing.T) {
	h := newHost(t, loopbackGrant(t, "127.0.0.1"))
	h.block = make(chan struct{})
	defer close(h.block)
	start := time.Now()
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{
		Dir: skillDir(t, map[string]string{"execute.py": `from skillbox import HostTimeout
def execute(args, ctx):
    try:
        ctx.fetch("http://127.0.0.1:1/")
    except HostTimeout as e:
        return [type(e).__name__, isinstance(e, TimeoutError), str(e)]`}),
		Limits: Limits{HostCallTimeout: 100 * time.Millisecond},
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(res.Value), `["HostTimeout",true,"fetch: the host did not answer in time`) {
		t.Fatalf("value = %s", res.Value)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

// A host call blocked past the run's deadline ends the run as a timeout, at the deadline.
func TestHostCallPastDeadline(t *testing.T) {
	h := newHost(t, loopbackGrant(t, "127.0.0.1"))
	h.block = make(chan struct{})
	defer close(h.block)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := runSkill(t, ctx, h, "def execute(args, ctx):\n    try:\n        ctx.fetch('http://127.0.0.1:1/')\n    except Exception:\n        pass\n    while True:\n        pass\n", `{}`)
	wantKind(t, err, KindTimeout)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestRequestAndResultLimits(t *testing.T) {
	dir := t.TempDir()
	g := &hostfuncs.Grant{Mounts: []hostfuncs.Mount{{Path: "/data", Dir: dir, Writable: true}},
		Limits: hostfuncs.Limits{MaxFileBytes: 1 << 20, MaxWriteBytes: 1 << 20}}
	c := compiledFor(t, 1024)
	res, err := Run(context.Background(), c, Program{
		Dir: skillDir(t, map[string]string{"execute.py": `from skillbox import LimitExceeded
def execute(args, ctx):
    try:
        ctx.write_file("/data/big", "x" * 5000)
        return "written"
    except LimitExceeded as e:
        ctx.write_file("/data/small", "ok")
        return type(e).__name__`}),
		Limits: Limits{MaxRequestBytes: 4096},
	}, newHost(t, g))
	if err != nil || string(res.Value) != `"LimitExceeded"` {
		t.Fatalf("value %s, %v", res.Value, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		t.Fatal("the oversized write reached the host")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "small")); err != nil || string(b) != "ok" {
		t.Fatalf("the channel did not recover: %q, %v", b, err)
	}
	_, err = Run(context.Background(), c, Program{
		Dir:    skillDir(t, map[string]string{"execute.py": "def execute(args, ctx):\n    return 'x' * 200\n"}),
		Limits: Limits{MaxResultBytes: 100},
	}, newHost(t, g))
	if e := wantKind(t, err, KindSkillError); !strings.Contains(e.Message, "more than the limit of 100") {
		t.Fatalf("err = %v", err)
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
	if e := wantKind(t, err, KindTimeout); !errors.Is(e, context.Canceled) {
		t.Fatalf("err = %v, does not unwrap to context.Canceled", err)
	}
}

// A memory cap below the snapshot's initial memory is refused when compiling, not at each run.
func TestMemoryCapTooSmall(t *testing.T) {
	_, err := Compile(context.Background(), testConfig(t, 16))
	if err == nil || !strings.Contains(err.Error(), "over limit of 16 pages") {
		t.Fatalf("compiled under a 1 MiB cap: %v", err)
	}
}

// A small skill's run imports nothing beyond the snapshot: an import the driver makes at run
// time (from the zip, compiled in) costs milliseconds per run and memory per instance.
func TestSnapshotCoversTheDriver(t *testing.T) {
	res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), `import sys, skillbox
def execute(args, ctx):
    return sorted(set(sys.modules) - skillbox._PRELOADED)`, `{}`)
	if err != nil || string(res.Value) != `["execute"]` {
		t.Fatalf("modules imported by the run: %s, %v", res.Value, err)
	}
}

// The standard library a skill may rely on works, including what the snapshot does not hold
// (imported from the zip at run time); what this build lacks says so.
func TestStdlib(t *testing.T) {
	res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), `import io, zlib, gzip, zipfile, hashlib, email, unicodedata, tomllib, decimal
import dataclasses, typing, xml.etree.ElementTree as ET, html.parser
def execute(args, ctx):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt", "hello " * 100)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        unzipped = z.read("a.txt").decode()
    out = [zlib.decompress(zlib.compress(b"x" * 1000)) == b"x" * 1000,
           gzip.decompress(gzip.compress(b"gz")) == b"gz", unzipped == "hello " * 100,
           hashlib.sha256(b"x").hexdigest()[:8], unicodedata.name("é"),
           tomllib.loads('a = 1')["a"], str(decimal.Decimal("0.1") + decimal.Decimal("0.2")),
           ET.fromstring("<a><b>t</b></a>").find("b").text,
           email.message_from_string("Subject: hi\n\nbody")["Subject"]]
    for m in ("sqlite3", "lzma", "bz2", "ssl"):
        try:
            __import__(m)
            out.append(m + " imported")
        except ImportError as e:
            out.append(str(e))
    return out`, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `[true,true,true,"2d711642","LATIN SMALL LETTER E WITH ACUTE",1,"0.3","t","hi",` +
		`"module 'sqlite3' is not built into the Skillbox Python interpreter","module 'lzma' is not built into the Skillbox Python interpreter",` +
		`"module 'bz2' is not built into the Skillbox Python interpreter","module 'ssl' is not available in the Skillbox sandbox: there is no network but ctx.fetch(url)"]`
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
}
