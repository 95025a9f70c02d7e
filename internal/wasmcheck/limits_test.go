package wasmcheck

import (
	"errors"
	"fmt"
	"testing"
)

// TestEveryLimit crosses each limit by one: a module with k of the thing passes with the limit set
// to k, and one with k+1 is refused with a LimitError naming that limit.
func TestEveryLimit(t *testing.T) {
	fimp := func(name string) []byte { return cat(str("env"), str(name), []byte{0x00, 0x00}) }
	funcs := func(bodies ...[]byte) []byte {
		return cat(sec(3, vec(repeat([]byte{0x00}, len(bodies))...)), sec(10, vec(bodies...)))
	}
	named := func(n int, f func(i int) []byte) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	cases := []struct {
		field string
		set   func(l *Limits, k int)
		k     int
		gen   func(n int) []byte
	}{
		{"maxModuleBytes", func(l *Limits, k int) { l.MaxModuleBytes = int64(k) }, 100,
			func(n int) []byte { return mod(sec(0, str("p"), make([]byte, n-12))) }},
		{"maxFunctions", func(l *Limits, k int) { l.MaxFunctions = uint32(k) }, 5,
			func(n int) []byte { return mod(typeVoid, sec(2, vec(fimp("f"))), funcs(repeat(nopBody, n-1)...)) }},
		{"maxFunctions", func(l *Limits, k int) { l.MaxFunctions = uint32(k) }, 5, // imports alone
			func(n int) []byte {
				return mod(typeVoid, sec(2, vec(named(n, func(i int) []byte { return fimp(fmt.Sprint(i)) })...)))
			}},
		{"maxFunctionBytes", func(l *Limits, k int) { l.MaxFunctionBytes = uint32(k) }, 100,
			func(n int) []byte {
				body := cat([]byte{0x00}, make([]byte, n-2), []byte{0x0b}) // no locals, unreachable..., end
				return mod(typeVoid, funcs(cat(leb(uint64(n)), body)))
			}},
		{"maxLocals", func(l *Limits, k int) { l.MaxLocals = uint32(k) }, 10, // 2 params + locals
			func(n int) []byte {
				return mod(sec(1, vec([]byte{0x60, 0x02, 0x7f, 0x7e, 0x00})), funcs(localsBody(3, uint64(n-5))))
			}},
		{"maxTotalLocals", func(l *Limits, k int) { l.MaxTotalLocals = uint64(k) }, 10,
			func(n int) []byte { return mod(typeVoid, funcs(localsBody(5), localsBody(uint64(n-5)))) }},
		{"maxTypes", func(l *Limits, k int) { l.MaxTypes = uint32(k) }, 5,
			func(n int) []byte { return mod(sec(1, vec(repeat([]byte{0x60, 0x00, 0x00}, n)...))) }},
		{"maxTypes", func(l *Limits, k int) { l.MaxTypes = uint32(k) }, 5, // a rec group's members count
			func(n int) []byte {
				return mod(sec(1, vec([]byte{0x60, 0x00, 0x00}, cat([]byte{0x4e}, vec(repeat([]byte{0x60, 0x00, 0x00}, n-1)...)))))
			}},
		{"maxImports", func(l *Limits, k int) { l.MaxImports = uint32(k) }, 5,
			func(n int) []byte {
				return mod(typeVoid, sec(2, vec(named(n, func(i int) []byte { return fimp(fmt.Sprint(i)) })...)))
			}},
		{"maxExports", func(l *Limits, k int) { l.MaxExports = uint32(k) }, 5,
			func(n int) []byte {
				return mod(sec(7, vec(named(n, func(i int) []byte { return cat(str(fmt.Sprint(i)), []byte{0x00, 0x00}) })...)))
			}},
		{"maxGlobals", func(l *Limits, k int) { l.MaxGlobals = uint32(k) }, 5, // 1 imported + defined
			func(n int) []byte {
				return mod(sec(2, vec(cat(str("env"), str("g"), []byte{0x03, 0x7f, 0x00}))),
					sec(6, vec(repeat(cat([]byte{0x7f, 0x00}, i32Zero), n-1)...)))
			}},
		{"maxParams", func(l *Limits, k int) { l.MaxParams = uint32(k) }, 5,
			func(n int) []byte {
				return mod(sec(1, vec(cat([]byte{0x60}, vec(repeat([]byte{0x7f}, n)...), []byte{0x00}))))
			}},
		{"maxParams", func(l *Limits, k int) { l.MaxParams = uint32(k) }, 5, // results
			func(n int) []byte { return mod(sec(1, vec(cat([]byte{0x60, 0x00}, vec(repeat([]byte{0x7f}, n)...))))) }},
		{"maxTables", func(l *Limits, k int) { l.MaxTables = uint32(k) }, 4,
			func(n int) []byte { return mod(sec(4, vec(repeat(tableMax(0, 0), n)...))) }},
		{"maxTables", func(l *Limits, k int) { l.MaxTables = uint32(k) }, 4, // 1 imported + defined
			func(n int) []byte {
				return mod(sec(2, vec(cat(str("env"), str("t"), []byte{0x01}, tableMax(0, 0)))), sec(4, vec(repeat(tableMax(0, 0), n-1)...)))
			}},
		{"maxTableEntries", func(l *Limits, k int) { l.MaxTableEntries = uint64(k) }, 100,
			func(n int) []byte { return mod(sec(4, vec(tableNoMax(uint64(n))))) }},
		{"maxTableEntries", func(l *Limits, k int) { l.MaxTableEntries = uint64(k) }, 100, // an import's max
			func(n int) []byte {
				return mod(sec(2, vec(cat(str("env"), str("t"), []byte{0x01}, tableMax(0, uint64(n))))))
			}},
		{"maxElemSegments", func(l *Limits, k int) { l.MaxElemSegments = uint32(k) }, 5,
			func(n int) []byte { return mod(sec(9, vec(repeat([]byte{0x01, 0x00, 0x00}, n)...))) }},
		{"maxElemEntries", func(l *Limits, k int) { l.MaxElemEntries = uint64(k) }, 10, // over two segments
			func(n int) []byte {
				return mod(sec(9, vec(cat([]byte{0x01, 0x00}, vec(repeat([]byte{0x00}, 4)...)),
					cat([]byte{0x01, 0x00}, vec(repeat([]byte{0x00}, n-4)...)))))
			}},
		{"maxDataSegments", func(l *Limits, k int) { l.MaxDataSegments = uint32(k) }, 5,
			func(n int) []byte { return mod(sec(11, vec(repeat([]byte{0x01, 0x00}, n)...))) }},
		{"memoryMiB", func(l *Limits, k int) { l.MaxMemoryPages = uint32(k) }, 10,
			func(n int) []byte { return mod(sec(5, vec(cat([]byte{0x00}, leb(uint64(n)))))) }},
		{"maxCustomSections", func(l *Limits, k int) { l.MaxCustomSections = uint32(k) }, 5,
			func(n int) []byte { return mod(repeat(sec(0, str("c")), n)...) }},
	}
	for _, c := range cases {
		var l Limits
		c.set(&l, c.k)
		if _, _, err := Check(c.gen(c.k), l); err != nil {
			t.Errorf("%s: %d at the limit of %d: %v", c.field, c.k, c.k, err)
		}
		_, _, err := Check(c.gen(c.k+1), l)
		var le *LimitError
		if !errors.As(err, &le) || le.Field != c.field || le.Max != uint64(c.k) || le.Got != uint64(c.k+1) {
			t.Errorf("%s: %d over the limit of %d: %#v", c.field, c.k+1, c.k, err)
		}
	}
}

// TestZeroLimitsAreDefaults: a zero Limits is DefaultLimits, never unlimited.
func TestZeroLimitsAreDefaults(t *testing.T) {
	if got := (Limits{}).withDefaults(); got != DefaultLimits {
		t.Errorf("Limits{} = %+v", got)
	}
	l := Limits{MaxFunctions: 7, MaxModuleBytes: -1}.withDefaults()
	if l.MaxFunctions != 7 || l.MaxModuleBytes != DefaultLimits.MaxModuleBytes || l.MaxLocals != DefaultLimits.MaxLocals {
		t.Errorf("%+v", l)
	}
}
