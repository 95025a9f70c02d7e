package cpython

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

// Neither guest ends by itself (a loop, an hour's sleep): that the run returns, a timeout
// that unwraps to the deadline, is what proves the deadline stopped it, on however slow a
// machine.
func TestTimeout(t *testing.T) {
	compiledFor(t, 1024) // compiled before the clock starts: the deadline is the run's alone
	for _, src := range []string{
		"def execute(args, ctx):\n    while True:\n        pass\n",
		"import time\ndef execute(args, ctx):\n    time.sleep(3600)\n",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := runSkill(t, ctx, newHost(t, &hostfuncs.Grant{}), src, `{}`)
		cancel()
		if e := wantKind(t, err, scripterr.Timeout); !errors.Is(e, context.DeadlineExceeded) {
			t.Fatalf("err = %v, does not unwrap to the deadline", err)
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
		wantKind(t, err, scripterr.MemoryLimit)
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
	if e := wantKind(t, err, scripterr.SkillError); e.Name != "RecursionError" {
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
	if e := wantKind(t, err, scripterr.SkillError); !strings.Contains(e.Message, "stack overflow") {
		t.Fatalf("err = %v", err)
	}
}

// The host never answers (Block is closed only when the test ends): the value says the
// operation's own timeout ended the wait.
func TestHostCallTimeout(t *testing.T) {
	h := newHost(t, loopbackGrant(t, "127.0.0.1"))
	h.Block = make(chan struct{})
	defer close(h.Block)
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
}

// A host call blocked past the run's deadline ends the run as a timeout, at the deadline: the
// host never answers, and the operation's own timeout is an hour, so only the deadline can
// end the call (and the loop after it), on however slow a machine.
func TestHostCallPastDeadline(t *testing.T) {
	h := newHost(t, loopbackGrant(t, "127.0.0.1"))
	h.Block = make(chan struct{})
	defer close(h.Block)
	c := compiledFor(t, 1024) // compiled before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, c, Program{
		Dir:    skillDir(t, map[string]string{"execute.py": "def execute(args, ctx):\n    try:\n        ctx.fetch('http://127.0.0.1:1/')\n    except Exception:\n        pass\n    while True:\n        pass\n"}),
		Args:   []byte(`{}`),
		Limits: Limits{HostCallTimeout: time.Hour},
	}, h)
	if e := wantKind(t, err, scripterr.Timeout); !errors.Is(e, context.DeadlineExceeded) {
		t.Fatalf("err = %v, does not unwrap to the deadline", err)
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
	if e := wantKind(t, err, scripterr.OutputLimit); !strings.Contains(e.Message, "more than the limit of 100") {
		t.Fatalf("err = %v", err)
	}
}

// A memory cap below the snapshot's initial memory is refused when compiling, not at each run.
func TestMemoryCapTooSmall(t *testing.T) {
	_, err := Compile(context.Background(), testConfig(t, 16))
	if err == nil || !strings.Contains(err.Error(), "over limit of 16 pages") {
		t.Fatalf("compiled under a 1 MiB cap: %v", err)
	}
}
