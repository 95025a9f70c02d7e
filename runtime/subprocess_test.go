package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/script"
	"github.com/skillbox-dev/skillbox/spec"
)

// subprocessRuntime is a runtime over one instruction skill "nest" with files, its programs
// granted the env TOKEN and scripts/skillbox.json's limits (generous by default: what each test
// meets is its own bound, never the clock).
func subprocessRuntime(t *testing.T, limits string, files map[string]string) *Runtime {
	t.Helper()
	if limits == "" {
		limits = `{"timeoutMs": 300000, "memoryMiB": 128}`
	}
	files["scripts/skillbox.json"] = `{"permissions": {"env": ["TOKEN"]}, "limits": ` + limits + `}`
	dir := t.TempDir()
	instructionSkill(t, dir, "nest", files)
	return newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{
		Env: map[string]string{"TOKEN": "t0k"}, Limits: spec.Limits{TimeoutMs: 300000}}})
}

// runNest runs program of the skill "nest" with argv and returns its output.
func runNest(t *testing.T, rt *Runtime, program string, argv ...string) run.ProgramOutput {
	t.Helper()
	res, err := rt.Run(context.Background(), run.Request{Skill: "nest", Script: program, Argv: argv, Who: testAdmin})
	if err != nil {
		t.Fatalf("%s: %v", program, err)
	}
	return programOutput(t, res)
}

// A Python program runs another program of its skill as a child process: by path or as
// python -m, with its arguments, input and working directory, its exit code and output given
// back as subprocess gives them; under the same grant, in the same files.
func TestProgramRunsAnotherProgram(t *testing.T) {
	rt := subprocessRuntime(t, "", map[string]string{
		"scripts/parent.py": `import os, subprocess, sys
from pathlib import Path
here = Path(__file__).parent
r = subprocess.run([sys.executable, str(here / "child.py"), "a", "b c"], capture_output=True, text=True, input="in")
print("run", r.returncode, repr(r.stdout), repr(r.stderr))
r = subprocess.run(["python3", "-u", "child.py", "exit", "3"], cwd=str(here), capture_output=True)
print("exit", r.returncode, r.stdout)
print("check_output", subprocess.check_output([sys.executable, "-m", "tools.tool", "x"], cwd="/skill"))
print("package", subprocess.run([sys.executable, "-m", "tools"], stdout=subprocess.PIPE).stdout)
Path("/tmp/note.txt").write_text("from the parent")
r = subprocess.run([sys.executable, str(here / "child.py"), "files"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print("merged", repr(r.stdout), Path("/tmp/back.txt").read_text())
p = subprocess.Popen([sys.executable, str(here / "child.py"), "piped"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
p.stdin.write("written")
p.stdin.close()
print("popen", repr(p.stdout.read()), p.wait())
try:
    subprocess.check_call([sys.executable, str(here / "child.py"), "exit", "5"], stdout=subprocess.DEVNULL)
except subprocess.CalledProcessError as e:
    print("called", e.returncode)
sys.stdout.flush()
subprocess.run([sys.executable, str(here / "child.py"), "inherit"])
`,
		"scripts/child.py": `import os, sys, skillbox
args = sys.argv[1:]
if args[:1] == ["exit"]:
    print("leaving", flush=True)
    sys.exit(int(args[1]))
if args == ["files"]:
    print(open("/tmp/note.txt").read(), "cwd", os.getcwd())
    print("on stderr", file=sys.stderr)
    open("/tmp/back.txt", "w").write("from the child")
    sys.exit(0)
if args == ["inherit"]:
    print("inherited stdout")
    print("inherited stderr", file=sys.stderr)
    sys.exit(0)
print("argv", args, "stdin", sys.stdin.read(), "env", skillbox.Context().env("TOKEN"))
print("err", file=sys.stderr)
`,
		"tools/__init__.py": "",
		"tools/helper.py":   "WHO = 'helper'\n",
		"tools/tool.py":     "import sys\nfrom . import helper\nprint(__name__, helper.WHO, sys.argv[1:])\n",
		"tools/__main__.py": "print('package main')\n",
	})
	out := runNest(t, rt, "parent.py")
	want := []string{
		`run 0 "argv ['a', 'b c'] stdin in env t0k\n" 'err\n'`,
		`exit 3 b'leaving\n'`,
		`check_output b"__main__ helper ['x']\n"`,
		`package b'package main\n'`,
		`merged 'from the parent cwd /tmp\non stderr\n' from the child`,
		`popen "argv ['piped'] stdin written env t0k\n" 0`,
		`called 5`,
		`inherited stdout`,
	}
	if out.ExitCode != 0 || out.Stdout != strings.Join(want, "\n")+"\n" || out.Stderr != "err\ninherited stderr\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", out.ExitCode, out.Stdout, strings.Join(want, "\n"), out.Stderr)
	}
}

// Anything but a Python program of the skill is refused as a program that is not installed,
// naming it; execute, which is not a program, may run none.
func TestSubprocessRefusesOtherPrograms(t *testing.T) {
	rt := subprocessRuntime(t, "", map[string]string{
		"scripts/refused.py": `import subprocess, sys
for args, kw in [(["git", "diff"], {}), ("ls -l", {"shell": True}), ([sys.executable, "-c", "print(1)"], {}),
                 ([sys.executable, "/etc/passwd"], {}), ([sys.executable, "nope.py"], {"cwd": "/skill/scripts"}),
                 ([sys.executable, "tool.js"], {"cwd": "/skill/scripts"}), ([sys.executable, "-m", "json.tool"], {}),
                 ([sys.executable], {}), (["soffice", "--headless"], {"executable": "/usr/bin/soffice"})]:
    try:
        subprocess.run(args, capture_output=True, **kw)
        print("ran", args)
    except FileNotFoundError as e:
        print(e.filename, "|", e.strerror)
    except Exception as e:
        print(type(e).__name__, e)
`,
		"scripts/tool.js": "console.log(1)",
	})
	out := runNest(t, rt, "refused.py")
	lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
	want := []string{
		"git | the Skillbox sandbox runs only this skill's own Python programs",
		"ls -l | there is no shell",
		"/usr/local/bin/python3 -c | python -c: code given on the command line is not a program of this skill",
		"/etc/passwd | subprocess: /etc/passwd is not a file of skill \"nest\"",
		"/skill/scripts/nope.py | subprocess: skill \"nest\" has no program scripts/nope.py",
		"InvalidRequest subprocess: scripts/tool.js is not a Python program",
		"/usr/local/lib/python3.11/json/tool.pyc | subprocess: /usr/local/lib/python3.11/json/tool.pyc is not a file of skill \"nest\"",
		"/usr/local/bin/python3 | python without a program file",
		"/usr/bin/soffice | the Skillbox sandbox runs only",
	}
	if len(lines) != len(want) {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out.Stdout, out.Stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], strings.SplitN(w, " | ", 2)[0]) || !strings.Contains(lines[i], w[strings.Index(w, " ")+1:]) {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
}

// execute runs in-process: a Python skill's execute may not start programs.
func TestExecuteRunsNoProgram(t *testing.T) {
	dir := t.TempDir()
	scriptFixture(t, dir, "py", simple("py", `"limits":{"timeoutMs":300000}`), map[string]string{
		"execute.py": `import subprocess, sys
def execute(args, ctx):
    return subprocess.run([sys.executable, "/skill/other.py"]).returncode
`,
		"other.py": "print(1)\n",
	})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Limits: spec.Limits{TimeoutMs: 300000}}})
	_, err := rt.Run(context.Background(), run.Request{Skill: "py", Who: testAdmin})
	var re *run.Error
	if !errors.As(err, &re) || re.Kind != run.KindPermissionDenied || !strings.Contains(re.Message, "only a skill's program may run its other programs") {
		t.Fatalf("got %v", err)
	}
}

// Every bound of nested runs, crossed: depth, count, the memory they share, their input and
// output, subprocess's own timeout and the run's deadline.
func TestSubprocessBounds(t *testing.T) {
	rt := subprocessRuntime(t, `{"timeoutMs": 300000, "memoryMiB": 64, "maxOutputBytes": 4096}`, map[string]string{
		"scripts/deep.py": `import subprocess, sys
depth = int(sys.argv[1])
try:
    r = subprocess.run([sys.executable, __file__, str(depth + 1)], capture_output=True, text=True)
    print(r.stdout, end="")
except Exception as e:
    print(depth, type(e).__name__, e)
`,
		"scripts/many.py": `import subprocess, sys
n = 0
try:
    while True:
        subprocess.run([sys.executable, "/skill/scripts/noop.py"], check=True)
        n += 1
except Exception as e:
    print(n, type(e).__name__, e)
`,
		"scripts/noop.py": "",
		"scripts/memory.py": `import subprocess, sys
def child():
    r = subprocess.run([sys.executable, "/skill/scripts/alloc.py"], capture_output=True, text=True)
    return r.returncode, r.stderr.strip().splitlines()[-1:]
print(child())
held = bytearray(30 << 20)
print(child())
`,
		"scripts/alloc.py": "b = bytearray(20 << 20)\nprint('allocated')\n",
		"scripts/output.py": `import subprocess, sys
r = subprocess.run([sys.executable, "/skill/scripts/loud.py"], capture_output=True)
print(len(r.stdout), r.returncode)
try:
    subprocess.run([sys.executable, "/skill/scripts/noop.py"], input=b"x" * 5000)
except Exception as e:
    print(type(e).__name__, e)
`,
		"scripts/loud.py": "print('x' * 10000)\n",
		"scripts/slow.py": `import subprocess, sys
try:
    subprocess.run([sys.executable, "/skill/scripts/forever.py"], timeout=0.2)
except subprocess.TimeoutExpired as e:
    print("TimeoutExpired", e.timeout)
`,
		"scripts/forever.py": "while True:\n    pass\n",
		"scripts/hang.py":    "import subprocess, sys\nsubprocess.run([sys.executable, '/skill/scripts/forever.py'])\n",
	})
	if out := runNest(t, rt, "deep.py", "0"); !strings.HasPrefix(out.Stdout, fmt.Sprintf("%d LimitExceeded subprocess: /skill/scripts/deep.py would be the program nested %d deep; programs may run programs at most %d deep", script.MaxNestedDepth, script.MaxNestedDepth+1, script.MaxNestedDepth)) {
		t.Errorf("depth: %+v", out)
	}
	if out := runNest(t, rt, "many.py"); !strings.HasPrefix(out.Stdout, fmt.Sprintf("%d LimitExceeded subprocess: /skill/scripts/noop.py would be the run's program number %d; a run may start at most %d", script.MaxNestedRuns, script.MaxNestedRuns+1, script.MaxNestedRuns)) {
		t.Errorf("count: %+v", out)
	}
	// The child may use what its parent has left of the run's memory: alone it has room, beside
	// a parent holding 30 MiB it has not, and it is stopped as the kernel stops a process.
	if out := runNest(t, rt, "memory.py"); out.Stdout != "(0, [])\n(-9, [\"skillbox: scripts/alloc.py ran out of memory (a program and the programs it runs share the run's 64 MiB)\"])\n" {
		t.Errorf("memory: %+v", out)
	}
	if out := runNest(t, rt, "output.py"); out.Stdout != "4096 0\nLimitExceeded subprocess: standard input of 5000 bytes for scripts/noop.py is more than maxOutputBytes (4096)\n" ||
		!strings.Contains(out.Stderr, "skillbox: /skill/scripts/loud.py: 5905 bytes of its stdout were cut (the run's maxOutputBytes)") {
		t.Errorf("output: %+v", out)
	}
	if out := runNest(t, rt, "slow.py"); out.Stdout != "TimeoutExpired 0.2\n" {
		t.Errorf("timeout: %+v", out)
	}
	// The run's deadline ends the children too: a child that never ends is the run's timeout.
	rt = subprocessRuntime(t, `{"timeoutMs": 2000}`, map[string]string{
		"scripts/hang.py":    "import subprocess, sys\nsubprocess.run([sys.executable, '/skill/scripts/forever.py'])\n",
		"scripts/forever.py": "while True:\n    pass\n",
	})
	_, err := rt.Run(context.Background(), run.Request{Skill: "nest", Script: "hang.py", Who: testAdmin})
	var re *run.Error
	if !errors.As(err, &re) || re.Kind != run.KindTimeout {
		t.Errorf("deadline: %v", err)
	}
}

// A nested run charges the run's admission for its own host memory while it runs (its wasm
// stack, buffers, its output on the way back): with no room in the budget for that, the program
// is told so, and the run it is in goes on.
func TestSubprocessIsAdmitted(t *testing.T) {
	rt := subprocessRuntime(t, "", map[string]string{
		"scripts/parent.py": `import subprocess, sys
try:
    subprocess.run([sys.executable, "/skill/scripts/noop.py"])
    print("ran")
except Exception as e:
    print(type(e).__name__, e)
`,
		"scripts/noop.py": "",
	})
	s, err := rt.Skill("nest")
	must(t, err)
	g := s.ProgramGrant()
	if out := runNest(t, rt, "parent.py"); out.Stdout != "ran\n" {
		t.Fatalf("with room: %+v", out)
	}
	// Fill the budget but for the run's charge and half a nested run's.
	st := rt.admission.Stats()
	filler, err := rt.admission.TryAcquire(st.MemoryBudget-st.MemoryInUse-script.Charge(g, 0)-script.NestedCharge(g)/2, true)
	must(t, err)
	out := runNest(t, rt, "parent.py")
	rt.admission.Release(filler)
	if !strings.HasPrefix(out.Stdout, "LimitExceeded subprocess: the host has no room now for scripts/noop.py: ") ||
		!strings.Contains(out.Stdout, "memory budget are free, and this needs") {
		t.Fatalf("without room: %+v", out)
	}
	if out := runNest(t, rt, "parent.py"); out.Stdout != "ran\n" {
		t.Fatalf("with room again: %+v", out)
	}
}
