package quickjs

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
	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

func TestExecute(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Method)
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	defer srv.Close()
	dir := t.TempDir()
	g := loopbackGrant(t, "127.0.0.1")
	g.Env = map[string]string{"REGION": "eu"}
	g.Mounts = []hostfuncs.Mount{{Path: "/data", Dir: dir, Writable: true}}
	g.Limits.MaxFileBytes, g.Limits.MaxWriteBytes = 1<<20, 1<<20
	for _, tt := range []struct {
		name, src, args, want string
	}{
		{"sync", skill(`(args, ctx) => ({sum: args.a + args.b, region: ctx.env("REGION"), missing: ctx.env("NOPE")})`),
			`{"a":1,"b":2}`, `{"sum":3,"region":"eu","missing":null}`},
		{"async", skill(`async (args, ctx) => { await null; const r = await ctx.fetch(args.url + "/x", {method: "post", body: "hi"});
			return {status: r.status, ok: r.ok, echo: r.headers["x-echo"], j: await r.json()}; }`),
			`{"url":"` + srv.URL + `"}`, `{"status":200,"ok":true,"echo":"POST","j":{"path":"/x"}}`},
		{"files", skill(`async (args, ctx) => { await ctx.writeFile("/data/t.txt", "héllo"); await ctx.writeFile("/data/b.bin", new Uint8Array([0, 255, 1, 2]));
			const b = await ctx.readFile("/data/b.bin", "bytes"); return [await ctx.readFile("/data/t.txt"), Array.from(b)]; }`),
			`null`, `["héllo",[0,255,1,2]]`},
		{"undefined", skill(`() => {}`), ``, `null`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := runSkill(t, context.Background(), newHost(t, g), tt.src, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != tt.want {
				t.Fatalf("value = %s, want %s", res.Value, tt.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b.bin")); err != nil || string(b) != "\x00\xff\x01\x02" {
		t.Fatalf("b.bin = %q, %v", b, err)
	}
}

func TestThrownError(t *testing.T) {
	for _, tt := range []struct{ name, src, wantName, wantMsg string }{
		{"sync", skill(`function execute() { helper(); }`) + `function helper() { throw new TypeError("boom"); }`, "TypeError", "boom"},
		{"async", skill(`async () => { await null; throw new RangeError("late"); }`), "RangeError", "late"},
		{"not an error", skill(`() => { throw "plain"; }`), "", "uncaught string: plain"},
		{"no execute", `var __skill = {}`, "TypeError", "the skill exports no function named execute"},
		{"syntax", `var __skill = {`, "SyntaxError", ""},
		{"not JSON", skill(`() => 10n`), "TypeError", "execute's result is not JSON-serialisable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), tt.src, `{}`)
			e := wantKind(t, err, scripterr.SkillError)
			if e.Name != tt.wantName || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("error = %q %q, want %q %q", e.Name, e.Message, tt.wantName, tt.wantMsg)
			}
			if tt.name == "sync" && !strings.Contains(e.Stack, "helper") {
				t.Fatalf("stack %q does not name helper", e.Stack)
			}
		})
	}
}

func TestPermissionDenied(t *testing.T) {
	g := &hostfuncs.Grant{Limits: hostfuncs.Limits{MaxFetches: 1, MaxFetchBytes: 1 << 10}}
	// Caught: the skill sees the name and carries on.
	res, err := runSkill(t, context.Background(), newHost(t, g), skill(`async (args, ctx) => {
		try { await ctx.fetch("http://127.0.0.1:1/"); return "fetched"; } catch (e) { return e.name + "/" + e.status + "/" + (e instanceof Error); } }`), `{}`)
	if err != nil || string(res.Value) != `"PermissionDenied/denied/true"` {
		t.Fatalf("caught: %s, %v", res.Value, err)
	}
	// Uncaught: the run ends as permission_denied.
	_, err = runSkill(t, context.Background(), newHost(t, g), skill(`(args, ctx) => ctx.readFile("/etc/passwd")`), `{}`)
	if e := wantKind(t, err, scripterr.PermissionDenied); e.Name != "PermissionDenied" {
		t.Fatalf("name = %q", e.Name)
	}
}

func TestLogs(t *testing.T) {
	h := newHost(t, &hostfuncs.Grant{})
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{
		Source: skill(`(args, ctx) => { console.log("hello", 1, {a: 2}); console.error("bad"); ctx.log("note", "warn");
			print("raw"); for (let i = 0; i < 1000; i++) print("x".repeat(100)); return 1; }`),
		Limits: Limits{MaxOutputBytes: 1000},
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	got := h.Lines()
	want := []logLine{{Level: "info", Source: "console", Message: `hello 1 {"a":2}`}, {Level: "error", Source: "console", Message: "bad"}, {Level: "warn", Source: "ctx", Message: "note"}, {Level: "info", Source: "stdout", Message: "raw"}}
	if len(got) < len(want) {
		t.Fatalf("logs = %q", got)
	}
	for i, w := range want {
		if got[i] != w {
			t.Fatalf("log %d = %q, want %q", i, got[i], w)
		}
	}
	// 1000 bytes of output: "raw\n" and 9 lines of 101 bytes; the other 991 are dropped.
	if n := len(got) - 3; n != 10 || res.DroppedLines != 991 {
		t.Fatalf("output lines kept %d, dropped %d; want 10 and 991", n, res.DroppedLines)
	}
	_, err = runSkill(t, context.Background(), h, skill(`(args, ctx) => ctx.log("x", "loud")`), `{}`)
	if e := wantKind(t, err, scripterr.SkillError); e.Name != "InvalidRequest" {
		t.Fatalf("bad level: %v", err)
	}
}

// The guest never ends by itself: that the run returns, a timeout, proves the deadline stopped
// it, on however slow a machine.
func TestTimeout(t *testing.T) {
	compiledFor(t, 1024) // compiled before the clock starts: the deadline is the run's alone
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := runSkill(t, ctx, newHost(t, &hostfuncs.Grant{}), skill(`() => { while (true) {} }`), `{}`)
	if e := wantKind(t, err, scripterr.Timeout); !errors.Is(e, context.DeadlineExceeded) {
		t.Fatalf("err = %v, does not unwrap to the deadline", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	c := compiledFor(t, 256) // 16 MiB
	for _, src := range []string{
		skill(`() => { const a = []; for (;;) a.push("x".repeat(1 << 16) + a.length); }`),
		skill(`() => { const m = new Map(); for (let i = 0; ; i++) m.set(i, {i}); }`),
		skill(`() => { const a = []; for (;;) a.push(new ArrayBuffer(1 << 20)); }`),
	} {
		_, err := Run(context.Background(), c, Program{Source: src}, newHost(t, &hostfuncs.Grant{}))
		wantKind(t, err, scripterr.MemoryLimit)
	}
	// Caught, the skill recovers and returns: the run is not a failure.
	res, err := Run(context.Background(), c, Program{Source: skill(`() => { try { let a = []; for (;;) a.push(new Array(1e5).fill(1)); } catch (e) { return e.message; } }`)}, newHost(t, &hostfuncs.Grant{}))
	if err != nil || string(res.Value) != `"out of memory"` {
		t.Fatalf("caught: %s, %v", res.Value, err)
	}
}

// Deep recursion fails the run, from the source, the bytecode or prepared, however the skill
// catches: it ends on the C stack's bound (or the wasm call stack's), before the stack runs into
// the static data below it. Without the C stack's guard, the first of these returned a number
// when prepared, its stack having run through that data.
func TestRecursion(t *testing.T) {
	c := compiledFor(t, 1024)
	for _, src := range []string{
		skill(`() => { function f(n) { return f(n + 1) + 1; } return f(0); }`),
		skill(`() => { function f(n) { try { return f(n + 1) + 1; } catch (e) { return "caught: " + e; } } return f(0); }`),
		skill(`() => { function f(a, b, c, d, e, g, h) { const x = [a, b, c], y = {d, e}; return f(a + 1, b, c, d, e, g, h) + x.length + y.d; } return f(0, 1, 2, 3, 4, 5, 6); }`),
		skill(`() => JSON.parse("[".repeat(200000) + "]".repeat(200000))`),
	} {
		code, p, err := prepared(t, c, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, prog := range []Program{{Source: src}, {Bytecode: code}, {Bytecode: code, Prepared: p}} {
			res, err := Run(context.Background(), c, prog, newHost(t, &hostfuncs.Grant{}))
			if err == nil {
				t.Fatalf("%s (prepared %v) = %s, want a stack overflow", src, prog.Prepared != nil, res.Value)
			}
			e := wantKind(t, err, scripterr.SkillError)
			if !strings.Contains(e.Message, "stack overflow") || !(errors.Is(err, interrupt.ErrCStackOverflow) || errors.Is(err, interrupt.ErrStackOverflow)) {
				t.Fatalf("%s: message = %q, err %v: want one of the stack bounds", src, e.Message, err)
			}
		}
	}
}

func TestMathRandomDiffers(t *testing.T) {
	src := skill(`() => [Math.random(), Math.random()]`)
	var prev string
	for i := 0; i < 2; i++ {
		res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), src, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		var v []float64
		if err := json.Unmarshal(res.Value, &v); err != nil || len(v) != 2 || v[0] == v[1] || v[0] < 0 || v[0] >= 1 {
			t.Fatalf("values %s, %v", res.Value, err)
		}
		if string(res.Value) == prev {
			t.Fatalf("two runs drew the same numbers: %s", prev)
		}
		prev = string(res.Value)
	}
}

func TestNoStdOs(t *testing.T) {
	res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), skill(`async () => {
		const r = [typeof std, typeof os, typeof scriptArgs, typeof setTimeout, typeof __seed, typeof bjson];
		for (const m of ["qjs:std", "qjs:os", "std", "os", "qjs:bjson", "./x.js"]) {
			try { await import(m); r.push(m + " imported"); } catch (e) { r.push("no"); }
		}
		r.push(Date.now() > 1.7e12 ? "real clock" : "fake clock " + Date.now());
		return r.join(","); }`), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `"undefined,undefined,undefined,undefined,undefined,undefined,no,no,no,no,no,no,real clock"`
	if string(res.Value) != want {
		t.Fatalf("got %s\nwant %s", res.Value, want)
	}
}

// The host never answers (Block is closed only when the test ends): the value says the
// operation's own timeout ended the wait.
func TestHostCallTimeout(t *testing.T) {
	h := newHost(t, loopbackGrant(t, "127.0.0.1"))
	h.Block = make(chan struct{})
	defer close(h.Block)
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{
		Source: skill(`async (args, ctx) => { try { await ctx.fetch("http://127.0.0.1:1/"); } catch (e) { return e.name + ": " + e.message; } }`),
		Limits: Limits{HostCallTimeout: 100 * time.Millisecond},
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(res.Value), `"TimeoutError: fetch: the host did not answer in time`) {
		t.Fatalf("value = %s", res.Value)
	}
}

func TestRequestTooLarge(t *testing.T) {
	dir := t.TempDir()
	g := &hostfuncs.Grant{Mounts: []hostfuncs.Mount{{Path: "/data", Dir: dir, Writable: true}},
		Limits: hostfuncs.Limits{MaxFileBytes: 1 << 20, MaxWriteBytes: 1 << 20}}
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{
		Source: skill(`async (args, ctx) => { try { await ctx.writeFile("/data/big", "x".repeat(5000)); return "written"; }
			catch (e) { await ctx.writeFile("/data/small", "ok"); return e.name; } }`),
		Limits: Limits{MaxLineBytes: 4096},
	}, newHost(t, g))
	if err != nil || string(res.Value) != `"LimitExceeded"` {
		t.Fatalf("value %s, %v", res.Value, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		t.Fatal("the oversized write reached the host")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "small")); err != nil || string(b) != "ok" {
		t.Fatalf("the bridge did not recover: %q, %v", b, err)
	}
}

// Runs of one Compiled in parallel each see their own arguments, host and globals.
func TestConcurrentRuns(t *testing.T) {
	c := compiledFor(t, 1024)
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func() {
			for i := 0; i < 10; i++ {
				g := &hostfuncs.Grant{Env: map[string]string{"W": fmt.Sprint(w)}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 10}}
				res, err := Run(context.Background(), c, Program{
					Source: skill(`async (args, ctx) => { const seen = globalThis.mine; globalThis.mine = args.i; await null;
						return [seen === undefined, ctx.env("W"), args.i]; }`),
					Args: []byte(fmt.Sprintf(`{"i":%d}`, i)),
				}, newHost(t, g))
				if want := fmt.Sprintf(`[true,"%d",%d]`, w, i); err != nil || string(res.Value) != want {
					errs <- fmt.Errorf("worker %d run %d: %s, %v; want %s", w, i, res.Value, err, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < 8; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
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
		Source: skill(`async (args, ctx) => { try { await ctx.fetch("http://127.0.0.1:1/"); } catch (e) {} while (true) {} }`),
		Args:   []byte(`{}`),
		Limits: Limits{HostCallTimeout: time.Hour},
	}, h)
	if e := wantKind(t, err, scripterr.Timeout); !errors.Is(e, context.DeadlineExceeded) {
		t.Fatalf("err = %v, does not unwrap to the deadline", err)
	}
}

func TestClosed(t *testing.T) {
	c, err := Compile(context.Background(), wazero.NewRuntimeConfig().WithCloseOnContextDone(false).WithMemoryLimitPages(256))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), c, Program{Source: skill(`() => 1`)}, newHost(t, &hostfuncs.Grant{})); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = runSkill(t, ctx, newHost(t, &hostfuncs.Grant{}), skill(`() => 1`), `{}`)
	if e := wantKind(t, err, scripterr.Timeout); !errors.Is(e, context.Canceled) {
		t.Fatalf("err = %v, does not unwrap to context.Canceled", err)
	}
}
