package interrupt

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Byte builders for modules the WAT fixtures cannot express (a custom section between two
// others, hostile encodings). Nothing here checks what it is given.

func leb(v uint64) []byte { return wasmbin.AppendU32(nil, uint32(v)) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func sec(id byte, contents ...[]byte) []byte {
	c := cat(contents...)
	return cat([]byte{id}, leb(uint64(len(c))), c)
}

func vec(items ...[]byte) []byte { return cat(leb(uint64(len(items))), cat(items...)) }

func str(s string) []byte { return cat(leb(uint64(len(s))), []byte(s)) }

func module(sections ...[]byte) []byte { return cat(magic, cat(sections...)) }

func custom(name string, data string) []byte { return sec(0, str(name), []byte(data)) }

var (
	typeVoid  = sec(1, vec([]byte{0x60, 0x00, 0x00}))                                 // type 0: () -> ()
	typeI32   = sec(1, vec([]byte{0x60, 0x00, 0x00}, []byte{0x60, 0x00, 0x01, 0x7f})) // 0: () -> (), 1: () -> i32
	oneFunc   = sec(3, vec([]byte{0x00}))
	loopBody  = []byte{0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b} // no locals, loop br 0 end, end
	endlessFn = sec(10, vec(cat(leb(uint64(len(loopBody))), loopBody)))
)

// body is a code entry: its size, no locals, the instructions (end included).
func body(instrs ...byte) []byte {
	b := cat([]byte{0x00}, instrs)
	return cat(leb(uint64(len(b))), b)
}

// compiles instruments wasm, requires the output to compile, and returns it.
func compiles(t *testing.T, wasm []byte) []byte {
	t.Helper()
	out := mustInstrument(t, wasm)
	if _, err := newRuntime(t, false).CompileModule(context.Background(), out); err != nil {
		t.Fatalf("wazero refuses the instrumented module: %v", err)
	}
	return out
}

// TestNoGlobalsNoExports: a module with neither a global nor an export section gets both, in
// their place in the section order, and can be stopped.
func TestNoGlobalsNoExports(t *testing.T) {
	wasm := module(typeVoid, oneFunc, endlessFn)
	if _, err := wazero.NewRuntime(context.Background()).CompileModule(context.Background(), wasm); err != nil {
		t.Fatal(err)
	}
	out := compiles(t, wasm)
	var ids []byte
	for _, s := range sections(t, out) {
		ids = append(ids, s.id)
	}
	if want := []byte{1, 3, 5, 6, 7, 10}; !bytes.Equal(ids, want) {
		t.Fatalf("sections %v, want %v", ids, want)
	}
}

// TestImportedGlobals: imported globals come first in the index space, so the stop flag's index
// counts them; the guest's own reads of them are unchanged, and Stop reaches the right global.
func TestImportedGlobals(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, false)
	// env exports the globals the guest imports.
	env := module(
		sec(6, vec([]byte{0x7f, 0x00, 0x41, 0x05, 0x0b}, []byte{0x7f, 0x01, 0x41, 0x07, 0x0b})),
		sec(7, vec(cat(str("g0"), []byte{0x03, 0x00}), cat(str("g1"), []byte{0x03, 0x01}))))
	if _, err := r.InstantiateWithConfig(ctx, env, wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	guest := module(typeI32,
		sec(2, vec(cat(str("env"), str("g0"), []byte{0x03, 0x7f, 0x00}), cat(str("env"), str("g1"), []byte{0x03, 0x7f, 0x01}))),
		sec(3, vec([]byte{0x01}, []byte{0x00})),
		sec(6, vec([]byte{0x7f, 0x01, 0x41, 0x0b, 0x0b})), // global 2: 11
		sec(7, vec(cat(str("sum"), []byte{0x00, 0x00}), cat(str("spin"), []byte{0x00, 0x01}))),
		sec(10, vec(
			body(0x23, 0x00, 0x23, 0x01, 0x6a, 0x23, 0x02, 0x6a, 0x0b), // g0 + g1 + g2
			body(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b))))
	out := compiles(t, guest)
	mod, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := mod.ExportedFunction("sum").Call(ctx); err != nil || res[0] != 23 {
		t.Fatalf("sum: %v %v, want 23", res, err)
	}
	if g := mod.ExportedGlobal(StopGlobal); g == nil || g.Type() != api.ValueTypeI32 || g.Get() != 0 {
		t.Fatalf("stop flag %v", g)
	}
	done := make(chan error, 1)
	go func() { _, err := mod.ExportedFunction("spin").Call(ctx); done <- err }()
	awaitCounting(t, mod)
	stopAndExpectTrap(t, mod, done)
}

// TestCustomSections: custom sections between and after the others are kept where they were,
// byte for byte; DWARF sections are dropped (the code offsets they describe have moved).
func TestCustomSections(t *testing.T) {
	wasm := module(custom("first", "a"), typeVoid, custom("between", "bb"), oneFunc,
		custom(".debug_info", "stale"), endlessFn, custom("name", "\x00\x01\x00"), custom("last", "z"))
	out := compiles(t, wasm)
	var names []string
	for _, s := range sections(t, out) {
		if s.id == secCustom {
			r := wasmbin.Reader{B: s.bytes, Pos: 1, End: len(s.bytes)}
			if _, err := r.U32("size"); err != nil {
				t.Fatal(err)
			}
			name, _ := r.Bytes("name")
			names = append(names, string(name))
		}
	}
	if got := strings.Join(names, " "); got != "first between name last" {
		t.Fatalf("custom sections %q", got)
	}
	if a, b := keptSections(t, wasm, wasm), keptSections(t, out, wasm); !equalSections(a, b) {
		t.Fatal("sections changed")
	}
}

// TestMemories: a module that imports its memory, or defines one, gets none added; an empty
// memory section is filled.
func TestMemories(t *testing.T) {
	for name, c := range map[string]struct {
		wasm     []byte
		memories int // memory sections in the output
	}{
		"defined":  {module(typeVoid, oneFunc, sec(5, vec([]byte{0x00, 0x01})), endlessFn), 1},
		"imported": {module(typeVoid, sec(2, vec(cat(str("env"), str("mem"), []byte{0x02, 0x00, 0x01}))), oneFunc, endlessFn), 0},
		"empty":    {module(typeVoid, oneFunc, sec(5, vec()), endlessFn), 1},
	} {
		out := mustInstrument(t, c.wasm)
		n := 0
		for _, s := range sections(t, out) {
			if s.id == secMemory {
				n++
				if name == "defined" && !bytes.Equal(s.bytes, sec(5, vec([]byte{0x00, 0x01}))) {
					t.Errorf("%s: memory section %x", name, s.bytes)
				}
			}
		}
		if n != c.memories {
			t.Errorf("%s: %d memory sections, want %d", name, n, c.memories)
		}
	}
}

// TestLabelGrows: a branch label that crosses a loop grows by one, and its encoding by a byte
// when it goes from 127 to 128.
func TestLabelGrows(t *testing.T) {
	instrs := []byte{0x03, 0x40} // loop
	for i := 0; i < 126; i++ {
		instrs = append(instrs, 0x02, 0x40) // block
	}
	instrs = append(instrs, 0x0c, 0x7f) // br 127: out of everything, through the loop
	for i := 0; i < 127; i++ {
		instrs = append(instrs, 0x0b)
	}
	instrs = append(instrs, 0x0b)
	wasm := module(typeVoid, oneFunc, sec(7, vec(cat(str("f"), []byte{0x00, 0x00}))), sec(10, vec(body(instrs...))))
	out := compiles(t, wasm)
	if !bytes.Contains(out, []byte{0x0c, 0x80, 0x01}) {
		t.Fatal("no br 128 in the output")
	}
	mod, err := newRuntime(t, false).Instantiate(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mod.ExportedFunction("f").Call(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRefusals: what Instrument leaves alone, with why; never an error.
func TestRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		wasm []byte
		why  string
	}{
		"start function": {module(typeVoid, oneFunc, sec(8, []byte{0x00}), endlessFn), "start function"},
		"stop export":    {module(typeVoid, oneFunc, sec(7, vec(cat(str(StopGlobal), []byte{0x00, 0x00}))), endlessFn), "already exports"},
		"budget export":  {module(typeVoid, oneFunc, sec(7, vec(cat(str(BudgetGlobal), []byte{0x00, 0x00}))), endlessFn), "already exports"},
		"legacy try":     {module(typeVoid, oneFunc, sec(10, vec(body(0x06, 0x40, 0x0b, 0x0b)))), "opcode 0x06"},
		"GC prefix":      {module(typeVoid, oneFunc, sec(10, vec(body(0xfb, 0x01, 0x0b)))), "opcode 0xfb"},
		"unassigned":     {module(typeVoid, oneFunc, sec(10, vec(body(0x27, 0x0b)))), "opcode 0x27"},
		// wazero would read fd 80 as i16x8.abs and then 00 as unreachable; the spec reads one
		// u32 sub-opcode 0x00 (v128.load) with a memarg after it.
		"SIMD two-byte":       {module(typeVoid, oneFunc, sec(10, vec(body(0xfd, 0x80, 0x00, 0x0b)))), "wazero reads one byte"},
		"SIMD unassigned":     {module(typeVoid, oneFunc, sec(10, vec(body(0xfd, 0x9a, 0x01, 0x0b)))), "sub-opcode 0x9a"},
		"misc past 17":        {module(typeVoid, oneFunc, sec(10, vec(body(0xfc, 0x12, 0x0b)))), "sub-opcode 18"},
		"atomic wait":         {module(typeVoid, oneFunc, sec(10, vec(body(0xfe, 0x01, 0x02, 0x00, 0x0b)))), "wait"},
		"global out of range": {module(typeVoid, oneFunc, sec(10, vec(body(0x23, 0x00, 0x1a, 0x0b)))), "global index 0"},
		// Once a function that loops gets its counter, local 0 would be it.
		"local out of range":   {module(typeVoid, oneFunc, sec(10, vec(body(0x03, 0x40, 0x20, 0x00, 0x1a, 0x0b, 0x0b)))), "local 0: the function has 0"},
		"export of no global":  {module(sec(7, vec(cat(str("g"), []byte{0x03, 0x00})))), "export of global 0"},
		"long LEB":             {module(typeVoid, oneFunc, sec(10, vec(body(0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a, 0x0b)))), "longer than 5"},
		"s33 fifth byte":       {module(typeVoid, oneFunc, sec(10, vec(body(0x02, 0xc0, 0xff, 0xff, 0xff, 0xff, 0x0b, 0x0b)))), "block type"},
		"block not closed":     {module(typeVoid, oneFunc, sec(10, vec(body(0x02, 0x40, 0x0b)))), "inside a block"},
		"after the end":        {module(typeVoid, oneFunc, sec(10, vec(body(0x0b, 0x01)))), "after the function's end"},
		"label out of range":   {module(typeVoid, oneFunc, sec(10, vec(body(0x0c, 0x01, 0x0b)))), "label 1"},
		"bodies not functions": {module(typeVoid, oneFunc, sec(10, vec())), "0 bodies for 1 functions"},
		"not wasm":             {[]byte("\x00asm\x0d\x00\x01\x00"), "magic"},
		"section order":        {module(oneFunc, typeVoid), "out of order"},
		"loops double it":      {module(typeVoid, oneFunc, sec(10, vec(body(append(bytes.Repeat([]byte{0x03, 0x40, 0x0b}, 200), 0x0b)...)))), "more than double"},
	} {
		out, ok, err := Instrument(c.wasm)
		if ok || out != nil || err != nil {
			t.Errorf("%s: instrumented (ok=%v, err=%v)", name, ok, err)
			continue
		}
		if why := Explain(c.wasm); !errors.Is(why, ErrRefused) || !strings.Contains(why.Error(), c.why) {
			t.Errorf("%s: refused with %v, want %q", name, why, c.why)
		}
	}
}

// TestSelfCheck: the re-reading Instrument makes of its output takes the output and nothing
// else: not the input, not the output with any inserted byte changed.
func TestSelfCheck(t *testing.T) {
	in := readFile(t, "../../testdata/wasm/spin.wasm")
	out, q, err := instrument(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := selfCheck(out, q); err != nil {
		t.Fatalf("the output: %v", err)
	}
	if selfCheck(in, q) == nil {
		t.Fatal("the input passes")
	}
	afterWeight := q.count1[1+wasmbin.SizeU32(q.budget)+2:] // the count but its first instruction and weight
	c := uint32(6)                                          // spin's loop counter, after its six locals
	localCheck := q.appendLocalCheck(nil, c, 1)[4:]         // but local.get $c and the weight
	for _, seq := range [][]byte{q.yield, afterWeight, q.appendCharge(nil, c), appendMark(nil, c), localCheck, q.appendLocalHead(nil, c)} {
		i := bytes.Index(out, seq)
		if i < 0 {
			t.Fatalf("no %x in the output", seq)
		}
		for j := range seq {
			bad := bytes.Clone(out)
			bad[i+j] ^= 0x01
			if selfCheck(bad, q) == nil {
				t.Errorf("byte %d of %x changed passes", j, seq)
			}
		}
	}
}
