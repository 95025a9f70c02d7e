package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// A Python skill runs through the same pipeline as every other: arguments validated, its sibling
// modules and lib/ importable, the SkillContext under its grant, the policy's directories mounted
// for open() (never through a symlink out of them), a private /tmp.
func TestPythonSkill(t *testing.T) {
	dir := t.TempDir()
	data := t.TempDir()
	must(t, os.WriteFile(filepath.Join(data, "in.csv"), []byte("name,score\nada,3\nbo,5\n"), 0o644))
	outside := filepath.Join(t.TempDir(), "secret.txt")
	must(t, os.WriteFile(outside, []byte("secret"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(data, "link.txt")))
	scriptFixture(t, dir, "stats", simple("stats", `"parameters":{"file":{"type":"string","default":"/data/in.csv"}},
		"permissions":{"env":["GREETING"],"files":[{"path":"/data","access":"read-only"}]}`), map[string]string{
		"execute.py": `import csv, tempfile
from helpers import mean
import tiny

def execute(args, ctx):
    with open(args["file"]) as f:
        rows = list(csv.DictReader(f))
    with tempfile.NamedTemporaryFile("w", delete=False) as t:
        t.write("scratch")
    print("read", len(rows), "rows")
    ctx.log("via ctx", "warn")
    try:
        open("/data/link.txt").read()
        escaped = True
    except OSError:
        escaped = False
    try:
        open("/etc/passwd").read()
        host = True
    except OSError:
        host = False
    return {"mean": mean([int(r["score"]) for r in rows]), "greeting": ctx.env("GREETING"),
            "tiny": tiny.VALUE, "escaped": escaped, "host_file": host, "tmp": t.name.startswith("/tmp/")}
`,
		"helpers.py":           "def mean(xs):\n    return sum(xs) / len(xs)\n",
		"lib/tiny/__init__.py": "VALUE = 'vendored'\n",
	})
	p := &policy.Policy{Env: map[string]string{"GREETING": "hi"}, Files: []policy.Mount{{Path: "/data", HostPath: data, Access: spec.ReadOnly}}}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: p})
	s, _ := rt.Skill("stats")
	if s.Language() != spec.LangPython {
		t.Fatalf("language %q", s.Language())
	}
	res, err := rt.Run(context.Background(), run.Request{Skill: "stats", Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Result) != `{"mean":4.0,"greeting":"hi","tiny":"vendored","escaped":false,"host_file":false,"tmp":true}` {
		t.Fatalf("result %s", res.Result)
	}
	var logs []string
	for _, l := range res.Logs {
		logs = append(logs, l.Source+":"+l.Level+":"+l.Message)
	}
	if got := strings.Join(logs, "|"); got != "stdout:info:read 2 rows|ctx:warn:via ctx" {
		t.Fatalf("logs %q", got)
	}
	if res.Usage.PeakMemoryBytes == 0 {
		t.Fatal("no peak memory")
	}
	// The first run compiled execute.py into the bytecode cache; the second runs that code.
	again, err := rt.Run(context.Background(), run.Request{Skill: "stats", Who: testAdmin})
	if err != nil || string(again.Result) != string(res.Result) {
		t.Fatalf("the second run: %s, %v", again.Result, err)
	}
	if c, h := rt.bytecode.Compiles.Load(), rt.bytecode.Hits.Load(); c != 1 || h != 1 {
		t.Fatalf("execute.py was compiled %d times and its code reused %d times; want 1 and 1", c, h)
	}
}

func TestPythonSkillErrors(t *testing.T) {
	dir := t.TempDir()
	// Only the skills that never end by themselves (loops, sleeps-long) have a short timeout:
	// every other one has 30 s (the default ceiling), so what it meets is its own error or
	// limit, however slowly a loaded machine (or -race) gets there.
	py := func(id, body, timeoutMs string) {
		if timeoutMs == "" {
			timeoutMs = "30000"
		}
		m := `"limits":{"timeoutMs":` + timeoutMs + `,"memoryMiB":64}`
		scriptFixture(t, dir, id, simple(id, m), map[string]string{"execute.py": body})
	}
	py("raises", "def execute(args, ctx):\n    raise ValueError('bad input')\n", "")
	py("denied", "def execute(args, ctx):\n    ctx.fetch('https://example.com/')\n", "")
	py("caught", "from skillbox import PermissionDenied\ndef execute(args, ctx):\n    try:\n        ctx.read_file('/etc/passwd')\n    except PermissionDenied:\n        pass\n    raise RuntimeError('gave up')\n", "")
	py("loops", "def execute(args, ctx):\n    while True:\n        pass\n", "1500")
	py("sleeps", "import time\ndef execute(args, ctx):\n    time.sleep(0.05)\n    return 'slept'\n", "")
	py("sleeps-long", "import time\ndef execute(args, ctx):\n    time.sleep(3600)\n", "1500")
	py("bomb", "def execute(args, ctx):\n    a = []\n    while True:\n        a.append(bytearray(1 << 20))\n", "")
	scriptFixture(t, dir, "big", simple("big", `"limits":{"maxOutputBytes":1000}`), map[string]string{"execute.py": "def execute(args, ctx):\n    return 'x' * 5000\n"})
	py("envelope", "def execute(args, ctx):\n    return {'success': False, 'error': 'said no'}\n", "")
	py("socket", "import socket\ndef execute(args, ctx):\n    socket.create_connection(('example.com', 80))\n", "")
	py("random", "import random\ndef execute(args, ctx):\n    return random.random()\n", "")
	scriptFixture(t, dir, "syntax", simple("syntax", ""), map[string]string{"execute.py": "def execute(args, ctx)\n    return 1\n"})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	tests := []struct {
		id   string
		kind run.ErrorKind
		msg  string
	}{
		{"raises", run.KindSkillError, "ValueError: bad input"},
		{"denied", run.KindPermissionDenied, "PermissionDenied"},
		{"caught", run.KindPermissionDenied, "gave up"},
		{"loops", run.KindTimeout, "timeout of 1.5s"},
		{"sleeps-long", run.KindTimeout, "timeout"},
		{"bomb", run.KindMemoryLimit, "out of memory"},
		{"big", run.KindOutputLimit, "maxOutputBytes"},
		{"envelope", run.KindSkillError, "said no"},
		{"socket", run.KindSkillError, ""},
		{"syntax", run.KindSkillError, "SyntaxError"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			res, err := rt.Run(ctx, run.Request{Skill: tt.id, Who: testAdmin})
			var re *run.Error
			if !errors.As(err, &re) || re.Kind != tt.kind || !strings.Contains(re.Message, tt.msg) {
				t.Fatalf("got %v, want kind %s with %q", err, tt.kind, tt.msg)
			}
			if tt.id == "raises" {
				logs, _ := json.Marshal(res.Logs)
				if !strings.Contains(string(logs), "Traceback") {
					t.Errorf("no traceback in the logs: %s", logs)
				}
			}
		})
	}
	if res, err := rt.Run(ctx, run.Request{Skill: "sleeps", Who: testAdmin}); err != nil || string(res.Result) != `"slept"` {
		t.Fatalf("time.sleep: %v %s", err, res.Result)
	}
	a, err1 := rt.Run(ctx, run.Request{Skill: "random", Who: testAdmin})
	b, err2 := rt.Run(ctx, run.Request{Skill: "random", Who: testAdmin})
	if err1 != nil || err2 != nil || string(a.Result) == string(b.Result) {
		t.Fatalf("random is reseeded per run: %s %s %v %v", a.Result, b.Result, err1, err2)
	}
}

// A Python program of an instruction skill runs with argv and stdin, its exit code, stdout and
// stderr the result.
func TestPythonProgram(t *testing.T) {
	dir := t.TempDir()
	instructionSkill(t, dir, "tools", map[string]string{
		"scripts/count.py": `import sys
words = sys.stdin.read().split()
print(len(words), "words;", "args:", " ".join(sys.argv[1:]))
print("note", file=sys.stderr)
sys.exit(3 if "--fail" in sys.argv else 0)
`,
		"scripts/boom.py": "raise KeyError('missing')\n",
		// Non-ASCII text through print, open() and file names; a relative path leads to the
		// working directory, the private /tmp when nothing writable is granted.
		"scripts/utf8.py": `import os
with open("notes-é.txt", "w") as f:
    f.write("naïve — ok")
print(open(os.path.join(os.getcwd(), "notes-é.txt")).read(), os.getcwd())
`,
	})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	res, err := rt.Run(ctx, run.Request{Skill: "tools", Script: "count.py", Argv: []string{"a", "--fail"}, Stdin: []byte("one two three"), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if out := programOutput(t, res); out.ExitCode != 3 || out.Stdout != "3 words; args: a --fail\n" || out.Stderr != "note\n" {
		t.Fatalf("%+v", out)
	}
	res, err = rt.Run(ctx, run.Request{Skill: "tools", Script: "utf8.py", Who: testAdmin})
	if out := programOutput(t, res); err != nil || out.ExitCode != 0 || out.Stdout != "naïve — ok /tmp\n" {
		t.Fatalf("UTF-8 and the working directory: %v %+v", err, out)
	}
	res, err = rt.Run(ctx, run.Request{Skill: "tools", Script: "boom.py", Who: testAdmin})
	if out := programOutput(t, res); err != nil || out.ExitCode != 1 || !strings.Contains(out.Stderr, "KeyError: 'missing'") {
		t.Fatalf("an uncaught exception exits 1 with the traceback: %v %+v", err, out)
	}
}

// A Python run's private /tmp is made only when the skill writes to it: a run that does not
// needs no host directory at all (here the host's temporary directory is missing), and a run
// that does, when it cannot be made, gets an error in Python and a log that says why.
func TestPythonTmpIsMadeOnlyWhenWritten(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	dir := t.TempDir()
	scriptFixture(t, dir, "plain", simple("plain", ""), map[string]string{
		"execute.py": "import os\ndef execute(args, ctx):\n    return sorted(os.listdir('/tmp'))\n"})
	scriptFixture(t, dir, "scratch", simple("scratch", ""), map[string]string{
		"execute.py": "def execute(args, ctx):\n    try:\n        open('/tmp/x', 'w').write('x')\n    except OSError as e:\n        return 'refused: ' + e.strerror\n    return 'wrote'\n"})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	res, err := rt.Run(context.Background(), run.Request{Skill: "plain", Who: testAdmin})
	if err != nil || string(res.Result) != `[]` {
		t.Fatalf("a run that does not write /tmp: %s, %v", res.Result, err)
	}
	res, err = rt.Run(context.Background(), run.Request{Skill: "scratch", Who: testAdmin})
	if err != nil || !strings.HasPrefix(string(res.Result), `"refused: `) {
		t.Fatalf("a run whose /tmp cannot be made: %s, %v", res.Result, err)
	}
	said := false
	for _, l := range res.Logs {
		said = said || l.Source == "skillbox" && strings.Contains(l.Message, "private /tmp cannot be made")
	}
	if !said {
		t.Fatalf("no log says why /tmp failed: %+v", res.Logs)
	}
}
