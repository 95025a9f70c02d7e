package wasmcheck

import (
	"bytes"
	"testing"
)

// TestTableMaxima checks the maxima Check gives tables, and the bytes of the rewritten module.
func TestTableMaxima(t *testing.T) {
	tableImport := func(max uint64) []byte { return sec(2, vec(cat(str("env"), str("t"), []byte{0x01}, tableMax(0, max)))) }
	initTable := func(limits []byte) []byte { return cat([]byte{0x40, 0x00}, limits, []byte{0xd0, 0x70, 0x0b}) }
	names := sec(0, str("name"), []byte{0x00, 0x02}, str("m"))
	badNames := sec(0, str("name"), []byte{0x00, 0x05}, str("m"))
	paddedTables := cat([]byte{0x04, 0x85, 0x80, 0x80, 0x80, 0x00}, vec(tableNoMax(6321))) // as Go's linker pads
	const budget = 1 << 20
	cases := []struct {
		name string
		in   []byte
		l    Limits
		want []Table
		out  []byte // nil: the input itself
	}{
		{"a table without a maximum gets the budget", mod(sec(4, vec(tableNoMax(6321)))), Limits{},
			[]Table{{funcref, 6321, budget, false, true}}, mod(sec(4, vec(tableMax(6321, budget))))},
		{"a padded table section", mod(paddedTables), Limits{},
			[]Table{{funcref, 6321, budget, false, true}}, mod(sec(4, vec(tableMax(6321, budget))))},
		{"a maximum within the budget is kept", mod(sec(4, vec(tableMax(73, 73)))), Limits{},
			[]Table{{funcref, 73, 73, false, false}}, nil},
		{"a maximum over the budget is lowered", mod(sec(4, vec(tableMax(1, 1<<24)))), Limits{},
			[]Table{{funcref, 1, budget, false, true}}, mod(sec(4, vec(tableMax(1, budget))))},
		{"tables without a maximum share the rest", mod(sec(4, vec(tableNoMax(10), tableMax(5, 7), tableNoMax(20)))), Limits{MaxTableEntries: 100},
			[]Table{{funcref, 10, 42, false, true}, {funcref, 5, 7, false, false}, {funcref, 20, 51, false, true}},
			mod(sec(4, vec(tableMax(10, 42), tableMax(5, 7), tableMax(20, 51))))},
		{"maxima that do not fit together are lowered", mod(sec(4, vec(tableMax(10, 90), tableMax(20, 30), tableNoMax(0)))), Limits{MaxTableEntries: 100},
			[]Table{{funcref, 10, 34, false, true}, {funcref, 20, 30, false, false}, {funcref, 0, 23, false, true}},
			mod(sec(4, vec(tableMax(10, 34), tableMax(20, 30), tableMax(0, 23))))},
		{"an import's maximum comes off the budget", mod(tableImport(100), sec(4, vec(tableNoMax(1)))), Limits{MaxTableEntries: 1000},
			[]Table{{funcref, 0, 100, true, false}, {funcref, 1, 900, false, true}}, mod(tableImport(100), sec(4, vec(tableMax(1, 900))))},
		{"an initializer is kept", mod(sec(4, vec(initTable(tableNoMax(2))))), Limits{},
			[]Table{{funcref, 2, budget, false, true}}, mod(sec(4, vec(initTable(tableMax(2, budget)))))},
		{"externref", mod(sec(4, vec([]byte{0x6f, 0x00, 0x00}))), Limits{},
			[]Table{{0x6f, 0, budget, false, true}}, mod(sec(4, vec(cat([]byte{0x6f}, tableMax(0, budget)[1:]))))},
		{"a dropped name section before the tables", mod(badNames, sec(4, vec(tableNoMax(1))), names), Limits{},
			[]Table{{funcref, 1, budget, false, true}}, mod(sec(4, vec(tableMax(1, budget))), names)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := bytes.Clone(c.in)
			info, out, err := Check(c.in, c.l)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(in, c.in) {
				t.Fatal("Check changed its input")
			}
			if len(info.Tables) != len(c.want) {
				t.Fatalf("tables %+v; want %+v", info.Tables, c.want)
			}
			var sum uint64
			for i := range c.want {
				if info.Tables[i] != c.want[i] {
					t.Errorf("table %d: %+v; want %+v", i, info.Tables[i], c.want[i])
				}
				sum += uint64(c.want[i].Max)
			}
			if info.TableEntries != sum {
				t.Errorf("TableEntries %d; want %d", info.TableEntries, sum)
			}
			want := c.out
			if want == nil {
				want = c.in
			}
			if !bytes.Equal(out, want) || info.Changed != (c.out != nil) {
				t.Errorf("changed %v, out\n% x\nwant\n% x", info.Changed, out, want)
			}
			if c.out == nil && &out[0] != &c.in[0] {
				t.Error("an unchanged module was copied")
			}
			assertIdempotent(t, out, c.l)
		})
	}
}

// assertIdempotent checks that Check accepts its own output and returns it as it is.
func assertIdempotent(t testing.TB, out []byte, l Limits) {
	t.Helper()
	info, again, err := Check(out, l)
	if err != nil {
		t.Fatalf("Check of its own output: %v", err)
	}
	if info.Changed || len(again) != len(out) || (len(out) > 0 && &again[0] != &out[0]) {
		t.Fatalf("Check of its own output changed it:\n% x\n% x", out, again)
	}
}
