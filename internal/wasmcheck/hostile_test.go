package wasmcheck

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

const huge = 0xFFFFFFFF // 2^32-1, the largest count a u32 LEB128 declares

// hostileCase is a module that must be refused, and how.
type hostileCase struct {
	name  string
	wasm  []byte
	l     Limits
	want  error  // ErrLimit or ErrMalformed
	field string // the LimitError's Field, when want is ErrLimit
}

// localsBody is a body declaring the given (count, i32) local entries.
func localsBody(counts ...uint64) []byte {
	b := leb(uint64(len(counts)))
	for _, c := range counts {
		b = cat(b, leb(c), []byte{0x7f})
	}
	b = append(b, 0x0b)
	return cat(leb(uint64(len(b))), b)
}

func hostileCases() []hostileCase {
	imp := func(kind byte, desc ...byte) []byte { return cat(str("env"), str("x"), []byte{kind}, desc) }
	customs := repeat(sec(0, str("x")), 3)
	tooManyTables := repeat(tableMax(0, 0), 17)
	manyLocals := 90 // functions of 50,000 locals each: 4.5M, over MaxTotalLocals (4M)
	return []hostileCase{
		// Counts that wazero allocates by before it reads what they count.
		{"code count 2^32-1", mod(typeVoid, sec(10, leb(huge))), Limits{}, ErrMalformed, ""},
		{"code and function count 2^32-1", mod(typeVoid, sec(3, leb(huge)), sec(10, leb(huge))), Limits{}, ErrLimit, "maxFunctions"},
		{"function count 2^32-1", mod(typeVoid, sec(3, leb(huge), []byte{0})), Limits{}, ErrLimit, "maxFunctions"},
		{"function count over its bytes", mod(typeVoid, sec(3, leb(1000), []byte{0})), Limits{}, ErrMalformed, ""},
		{"2^32-1 locals in two entries", mod(typeVoid, oneFunc, sec(10, vec(localsBody(1<<31, 1<<31-1)))), Limits{}, ErrLimit, "maxLocals"},
		{"4.5M locals over 90 functions", mod(typeVoid, sec(3, vec(repeat([]byte{0}, manyLocals)...)),
			sec(10, vec(repeat(localsBody(50_000), manyLocals)...))), Limits{}, ErrLimit, "maxTotalLocals"},
		{"body size 2^32-1", mod(typeVoid, oneFunc, sec(10, vec(leb(huge)))), Limits{}, ErrLimit, "maxFunctionBytes"},
		{"body size over its bytes", mod(typeVoid, oneFunc, sec(10, vec(cat(leb(1000), []byte{0x00, 0x0b})))), Limits{}, ErrMalformed, ""},
		{"local declarations over their bytes", mod(typeVoid, oneFunc, sec(10, vec([]byte{0x02, 0x7f, 0x0b}))), Limits{}, ErrMalformed, ""},
		{"import count 2^32-1", mod(sec(2, leb(huge))), Limits{}, ErrLimit, "maxImports"},
		{"import count over its bytes", mod(sec(2, leb(1000), imp(0, 0))), Limits{}, ErrMalformed, ""},
		{"import name length 2^32-1", mod(sec(2, vec(cat(leb(huge), []byte("env"))))), Limits{}, ErrMalformed, ""},
		{"export count 2^32-1", mod(sec(7, leb(huge))), Limits{}, ErrLimit, "maxExports"},
		{"global count 2^32-1", mod(sec(6, leb(huge))), Limits{}, ErrLimit, "maxGlobals"},
		{"type count 2^32-1", mod(sec(1, leb(huge))), Limits{}, ErrLimit, "maxTypes"},
		{"rec group of 2^32-1 types", mod(sec(1, vec(cat([]byte{0x4e}, leb(huge))))), Limits{}, ErrLimit, "maxTypes"},
		{"2^32-1 params", mod(sec(1, vec(cat([]byte{0x60}, leb(huge))))), Limits{}, ErrLimit, "maxParams"},
		{"data segment count 2^32-1", mod(sec(11, leb(huge))), Limits{}, ErrLimit, "maxDataSegments"},
		{"data segment of 2^32-1 bytes", mod(sec(11, vec(cat([]byte{0x01}, leb(huge))))), Limits{}, ErrMalformed, ""},
		{"element segment count 2^32-1", mod(sec(9, leb(huge))), Limits{}, ErrLimit, "maxElemSegments"},
		{"2^32-1 element indices", mod(sec(9, vec(cat([]byte{0x00}, i32Zero, leb(huge))))), Limits{}, ErrLimit, "maxElemEntries"},
		{"2^32-1 element expressions", mod(sec(9, vec(cat([]byte{0x05, funcref}, leb(huge))))), Limits{}, ErrLimit, "maxElemEntries"},
		{"element entries over their bytes", mod(sec(9, vec(cat([]byte{0x00}, i32Zero, leb(1000))))), Limits{}, ErrMalformed, ""},
		{"custom section of 2^32-1 bytes", mod(cat([]byte{0}, leb(huge), str("x"))), Limits{}, ErrMalformed, ""},
		{"too many custom sections", mod(customs...), Limits{MaxCustomSections: 2}, ErrLimit, "maxCustomSections"},

		// Counts at their limit, with no bytes behind them: allocating by a count after checking
		// its limit but before checking its bytes still costs megabytes, which TestHostile sees.
		{"function count at the limit", mod(typeVoid, sec(3, leb(200_000))), Limits{}, ErrMalformed, ""},
		{"import count at the limit", mod(sec(2, leb(100_000))), Limits{}, ErrMalformed, ""},
		{"data segment count at the limit", mod(sec(11, leb(200_000))), Limits{}, ErrMalformed, ""},
		{"element entries at the limit", mod(sec(9, vec(cat([]byte{0x00}, i32Zero, leb(1<<17))))), Limits{}, ErrMalformed, ""},
		{"50,000 local declarations in a 3-byte body", mod(typeVoid, oneFunc, sec(10, vec(cat(leb(3), leb(50_000))))), Limits{}, ErrMalformed, ""},

		// LEB128s: truncated, too long, too wide.
		{"truncated section size", mod([]byte{0x01, 0x80, 0x80}), Limits{}, ErrMalformed, ""},
		{"truncated count", mod([]byte{0x01, 0x02, 0x80, 0x80}), Limits{}, ErrMalformed, ""},
		{"6-byte LEB128 count", mod(sec(1, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00})), Limits{}, ErrMalformed, ""},
		{"64-bit LEB128 count", mod(sec(3, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})), Limits{}, ErrMalformed, ""},
		{"33-bit LEB128 count", mod(sec(3, []byte{0xff, 0xff, 0xff, 0xff, 0x1f})), Limits{}, ErrMalformed, ""},
		{"64-bit LEB128 section size", mod([]byte{0x01, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00}), Limits{}, ErrMalformed, ""},
		{"i32.const of 6 bytes", mod(sec(6, vec(cat([]byte{0x7f, 0x00, 0x41}, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, []byte{0x0b})))), Limits{}, ErrMalformed, ""},

		// Structure.
		{"bad magic", []byte("\x00wasm\x01\x00\x00\x00"), Limits{}, ErrMalformed, ""},
		{"component version", []byte("\x00asm\x0d\x00\x01\x00"), Limits{}, ErrMalformed, ""},
		{"truncated header", []byte("\x00as"), Limits{}, ErrMalformed, ""},
		{"unknown section id", mod(sec(14)), Limits{}, ErrMalformed, ""},
		{"sections out of order", mod(oneFunc, typeVoid, oneBody), Limits{}, ErrMalformed, ""},
		{"duplicate section", mod(typeVoid, typeVoid), Limits{}, ErrMalformed, ""},
		{"section overruns the module", mod(cat([]byte{0x01}, leb(100), []byte{0x00})), Limits{}, ErrMalformed, ""},
		{"contents overrun their section", mod(cat([]byte{0x01, 0x02}, []byte{0x01, 0x60, 0x00, 0x00})), Limits{}, ErrMalformed, ""},
		{"contents end before their section", mod(sec(1, vec(), []byte{0x00})), Limits{}, ErrMalformed, ""},
		{"functions without code", mod(typeVoid, oneFunc), Limits{}, ErrMalformed, ""},
		{"code without functions", mod(typeVoid, oneBody), Limits{}, ErrMalformed, ""},
		{"body without end", mod(typeVoid, oneFunc, sec(10, vec([]byte{0x02, 0x00, 0x01}))), Limits{}, ErrMalformed, ""},
		{"i32.add in a constant expression", mod(sec(6, vec(cat([]byte{0x7f, 0x00}, []byte{0x41, 0x01, 0x41, 0x02, 0x6a, 0x0b})))), Limits{}, ErrMalformed, ""},
		{"invalid value type", mod(sec(1, vec([]byte{0x60, 0x01, 0x40, 0x00}))), Limits{}, ErrMalformed, ""},
		{"custom section name not UTF-8", mod(sec(0, str("\xff"))), Limits{}, ErrMalformed, ""},
		{"module over maxModuleBytes", mod(typeVoid, oneFunc, oneBody), Limits{MaxModuleBytes: 16}, ErrLimit, "maxModuleBytes"},

		// Tables and memories.
		{"table min over the budget", mod(sec(4, vec(tableNoMax(1<<20+1)))), Limits{}, ErrLimit, "maxTableEntries"},
		{"table mins over the budget together", mod(sec(4, vec(tableNoMax(1<<19+1), tableNoMax(1<<19)))), Limits{}, ErrLimit, "maxTableEntries"},
		{"imported table without a maximum", mod(sec(2, vec(imp(0x01, tableNoMax(1)...)))), Limits{}, ErrLimit, "maxTableEntries"},
		{"imported table max over the budget", mod(sec(2, vec(imp(0x01, tableMax(1, 1<<21)...)))), Limits{}, ErrLimit, "maxTableEntries"},
		{"imported table leaves too little", mod(sec(2, vec(imp(0x01, tableMax(1, 1<<20)...))), sec(4, vec(tableNoMax(1)))), Limits{}, ErrLimit, "maxTableEntries"},
		{"17 tables", mod(sec(4, vec(tooManyTables...))), Limits{}, ErrLimit, "maxTables"},
		{"table max below min", mod(sec(4, vec(tableMax(2, 1)))), Limits{}, ErrMalformed, ""},
		{"shared table", mod(sec(4, vec([]byte{funcref, 0x03, 0x00, 0x01}))), Limits{}, ErrMalformed, ""},
		{"two memories", mod(sec(5, vec([]byte{0x00, 0x01}, []byte{0x00, 0x01}))), Limits{}, ErrMalformed, ""},
		{"imported and defined memory", mod(sec(2, vec(imp(0x02, 0x00, 0x01))), sec(5, vec([]byte{0x00, 0x01}))), Limits{}, ErrMalformed, ""},
		{"memory64", mod(sec(5, vec([]byte{0x04, 0x01}))), Limits{}, ErrMalformed, ""},
		{"memory min over the limit", mod(sec(5, vec(cat([]byte{0x00}, leb(1025))))), Limits{MaxMemoryPages: 1024}, ErrLimit, "memoryMiB"},
		{"imported memory min over the limit", mod(sec(2, vec(imp(0x02, cat([]byte{0x00}, leb(1025))...)))), Limits{MaxMemoryPages: 1024}, ErrLimit, "memoryMiB"},
	}
}

// allocated is the heap allocated by one call of f, on average over runs calls.
func allocated(runs int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// TestHostile checks that each hostile module is refused as it should be, and with little memory:
// any allocation by one of the counts above would be gigabytes, so the bound (64 KiB, far above
// what a walk and its error cost) fails as soon as someone allocates by a declared count.
func TestHostile(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			info, out, err := Check(c.wasm, c.l)
			if !errors.Is(err, c.want) || info != nil || out != nil {
				t.Fatalf("Check = %v, %d bytes, %v; want %v", info, len(out), err, c.want)
			}
			var le *LimitError
			if errors.As(err, &le) != (c.want == ErrLimit) || (le != nil && le.Field != c.field) {
				t.Fatalf("error %#v; want field %q", err, c.field)
			}
			if a := allocated(20, func() { Check(c.wasm, c.l) }); a > 64<<10 {
				t.Errorf("Check of %d bytes allocated %d bytes", len(c.wasm), a)
			}
			t.Logf("%d bytes: %v", len(c.wasm), err)
		})
	}
}

func TestLimitErrorMessage(t *testing.T) {
	// One import, so the body is function 1's; its declared size need not be there: the limit is
	// checked first.
	m := mod(typeVoid, sec(2, vec(cat(str("env"), str("f"), []byte{0x00, 0x00}))), oneFunc, sec(10, vec(leb(13<<20))))
	_, _, err := Check(m, Limits{})
	want := "function 1's body is 13.0 MiB (13631488 bytes); at most 2.0 MiB (2097152 bytes) (limit maxFunctionBytes): build with optimisations or split the function, or raise maxFunctionBytes"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	_, _, err = Check(mod(sec(2, vec(cat(str("env"), str("t"), []byte{0x01}, tableNoMax(1))))), Limits{})
	if err == nil || !strings.Contains(err.Error(), "imported table 0 (env.t)'s maximum is unbounded; at most 1048576 entries (limit maxTableEntries): declare a maximum") {
		t.Errorf("imported table: %v", err)
	}
}

func TestFormatErrorOffset(t *testing.T) {
	// The type section's count starts at byte 10 (8 of header, id, size).
	_, _, err := Check(mod(sec(1, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00})), Limits{})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 10 || !strings.Contains(err.Error(), "the number of types: LEB128 longer than 5 bytes") {
		t.Fatalf("%#v", err)
	}
	_, _, err = Check(mod(typeVoid, oneFunc, sec(10, vec([]byte{0x02, 0x00, 0x01}))), Limits{})
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "function 0: body does not end with end") {
		t.Fatalf("%v", err)
	}
}
