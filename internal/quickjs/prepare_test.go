package quickjs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

// prepared compiles src to bytecode and prepares it in c.
func prepared(t testing.TB, c *Compiled, src string) ([]byte, *Prepared, error) {
	t.Helper()
	code, err := c.Bytecode(context.Background(), src, "skill.js", 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Prepare(context.Background(), code, 16<<20)
	return code, p, err
}

// A prepared run answers as a run from the bytecode does, with the same seed: the value, the
// host's answer, Math.random's draws, a promise, an exception's stack.
func TestPreparedMatchesBytecode(t *testing.T) {
	c := compiledFor(t, 1024)
	src := skill(`async (args, ctx) => { const r = [Math.random(), Math.random()]; await null;
		if (args.fail) throw new TypeError("no " + args.n);
		return {env: ctx.env("A"), n: args.n * 2, r, d: typeof Date.now()}; }`)
	code, p, err := prepared(t, c, src)
	if err != nil {
		t.Fatal(err)
	}
	g := &hostfuncs.Grant{Env: map[string]string{"A": "a"}, Limits: hostfuncs.Limits{MaxLogBytes: 1 << 10}}
	for _, args := range []string{`{"n":21}`, `{"n":2,"fail":true}`} {
		var out []string
		for _, prep := range []*Prepared{nil, p, p} {
			res, err := runWith(context.Background(), c, c.snap, Program{Bytecode: code, Prepared: prep, Args: []byte(args)}, newHost(t, g), [16]byte{7, 1, 2, 3})
			if err != nil {
				var e *scripterr.Error
				if !errors.As(err, &e) {
					t.Fatal(err)
				}
				out = append(out, e.Name+": "+e.Message+"\n"+e.Stack)
				continue
			}
			out = append(out, string(res.Value))
		}
		for i, o := range out {
			if o != out[0] {
				t.Fatalf("args %s: run %d = %q, want %q (as from the bytecode)", args, i, o, out[0])
			}
		}
		t.Logf("%s: %s", args, out[0])
	}
}

// Each run of a prepared skill starts from the state its top level left, never from another
// run's.
func TestPreparedRunsDoNotShareState(t *testing.T) {
	c := compiledFor(t, 1024)
	_, p, err := prepared(t, c, `const seen = {n: 0}; globalThis.counter = 0;
		var __skill = {execute() { seen.n++; globalThis.counter++; return [seen.n, globalThis.counter]; }};`)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		res, err := Run(context.Background(), c, Program{Prepared: p}, newHost(t, &hostfuncs.Grant{}))
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Value) != "[1,1]" {
			t.Fatalf("run %d = %s, want [1,1]", i, res.Value)
		}
	}
}

// A top level that replaces or deletes the prelude's globals does not change how its runs start.
func TestPreparedStartsWhateverTheTopLevelDid(t *testing.T) {
	c := compiledFor(t, 1024)
	for _, top := range []string{
		`globalThis.__go = () => print("\x03" + JSON.stringify({ok: true, result: "hijacked"}));`,
		`delete globalThis.__go; delete globalThis.__drive; delete globalThis.__seed;`,
	} {
		_, p, err := prepared(t, c, top+` var __skill = {execute(args) { return args.n + 1; }};`)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), c, Program{Prepared: p, Args: []byte(`{"n":1}`)}, newHost(t, &hostfuncs.Grant{}))
		if err != nil || string(res.Value) != "2" {
			t.Fatalf("%s: %s, %v; want 2, from execute", top, res.Value, err)
		}
	}
}

// A top level that reads what must differ per run, or talks to the host, is not prepared.
func TestPrepareRefusesAnImpureTopLevel(t *testing.T) {
	c := compiledFor(t, 1024)
	for name, top := range map[string]string{
		"Math.random":        `const r = Math.random();`,
		"Date.now":           `const t = Date.now();`,
		"new Date":           `const t = new Date();`,
		"console.log":        `console.log("hi");`,
		"print":              `print("hi");`,
		"the SkillContext":   `let e; try { e = __ctx.env("A"); } catch (err) {}`,
		"a caught host call": `try { __ctx.log("x"); } catch (err) {}`,
	} {
		_, _, err := prepared(t, c, top+` var __skill = {execute() { return 1; }};`)
		if !errors.Is(err, ErrImpure) {
			t.Errorf("%s: err = %v, want ErrImpure", name, err)
		}
	}
	// Using them inside execute is every run's own business.
	if _, _, err := prepared(t, c, `var __skill = {execute() { return [Math.random(), Date.now()]; }};`); err != nil {
		t.Errorf("a pure top level: %v", err)
	}
}

// A top level that throws, loops past the deadline or runs out of memory is reported as the
// run would report it, and not prepared.
func TestPrepareFailures(t *testing.T) {
	c := compiledFor(t, 1024)
	_, _, err := prepared(t, c, `throw new RangeError("top"); var __skill = {};`)
	if e := wantKind(t, err, scripterr.SkillError); e.Name != "RangeError" {
		t.Fatalf("throw: %+v", e)
	}
	code, err := c.Bytecode(context.Background(), `for (;;) {} var __skill = {};`, "skill.js", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Prepare(ctx, code, 16<<20)
	wantKind(t, err, scripterr.Timeout)
	_, _, err = prepared(t, c, `const a = []; for (;;) a.push(new Array(1e5).fill(1)); var __skill = {};`)
	wantKind(t, err, scripterr.MemoryLimit)
	// Within memory, but more than the caller keeps.
	code, err = c.Bytecode(context.Background(), `const big = new Array(1e6).fill(7); var __skill = {execute() { return big.length; }};`, "skill.js", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(context.Background(), code, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a top level that fills 8 MB, bound 1 MB: err = %v, want ErrTooLarge", err)
	}
}

// A Prepared belongs to the Compiled that made it: another's runs it from the bytecode.
func TestPreparedOfAnotherCompiledIsIgnored(t *testing.T) {
	c, other := compiledFor(t, 1024), compiledFor(t, 2048)
	code, p, err := prepared(t, c, skill(`() => 5`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), other, Program{Bytecode: code, Prepared: p}, newHost(t, &hostfuncs.Grant{}))
	if err != nil || string(res.Value) != "5" {
		t.Fatalf("= %s, %v", res.Value, err)
	}
}

// Math.random's values are those of sfc32 seeded with the run's 128 bits, its first 15 outputs
// discarded (the host draws those: seedState), from the source and prepared alike.
func TestMathRandomIsSeededSfc32(t *testing.T) {
	c := compiledFor(t, 1024)
	src := skill(`(args) => {
		let [a, b, c, d] = args.s; d |= 1;
		const next = () => { a |= 0; b |= 0; c |= 0; d |= 0; const t = (a + b | 0) + d | 0; d = d + 1 | 0;
			a = b ^ b >>> 9; b = c + (c << 3) | 0; c = (c << 21 | c >>> 11); c = c + t | 0; return (t >>> 0) / 4294967296; };
		for (let i = 0; i < 15; i++) next();
		const want = [next(), next(), next()], got = [Math.random(), Math.random(), Math.random()];
		return JSON.stringify(want) === JSON.stringify(got) ? "same" : JSON.stringify({want, got});
	}`)
	code, p, err := prepared(t, c, src)
	if err != nil {
		t.Fatal(err)
	}
	seed := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 0xff, 0xfe, 0xfd, 0xfc, 9, 8, 7, 6}
	args := fmt.Sprintf(`{"s":[%d,%d,%d,%d]}`, int32(binary.LittleEndian.Uint32(seed[0:])), int32(binary.LittleEndian.Uint32(seed[4:])),
		int32(binary.LittleEndian.Uint32(seed[8:])), int32(binary.LittleEndian.Uint32(seed[12:])))
	for _, prog := range []Program{{Source: src}, {Bytecode: code}, {Bytecode: code, Prepared: p}} {
		prog.Args = []byte(args)
		res, err := runWith(context.Background(), c, c.snap, prog, newHost(t, &hostfuncs.Grant{}), seed)
		if err != nil || string(res.Value) != `"same"` {
			t.Fatalf("prepared %v: %s, %v", prog.Prepared != nil, res.Value, err)
		}
	}
}

// Prepare stops a top level at its first impurity rather than running it to its end: a long
// one would cost its first run twice. These never end by themselves: without the stop, each
// would run to the deadline.
func TestPrepareStopsAtTheFirstImpurity(t *testing.T) {
	c := compiledFor(t, 1024)
	for _, top := range []string{`Math.random();`, `Date.now();`, `print("x");`, `try { __ctx.log("x"); } catch (e) {}`} {
		code, err := c.Bytecode(context.Background(), top+` for (;;) {} var __skill = {};`, "skill.js", 0)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_, err = c.Prepare(ctx, code, 16<<20)
		late := ctx.Err()
		cancel()
		if !errors.Is(err, ErrImpure) || late != nil {
			t.Fatalf("%s then a loop: err = %v, deadline passed: %v; want ErrImpure at once", top, err, late)
		}
	}
}
