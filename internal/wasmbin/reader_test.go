package wasmbin

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/leb128"
)

// reads are every read of the Reader, as the fuzz target and the tests call them.
var reads = []struct {
	name string
	read func(r *Reader) error
}{
	{"Byte", func(r *Reader) error { _, err := r.Byte("x"); return err }},
	{"Zero", func(r *Reader) error { return r.Zero("x") }},
	{"Skip", func(r *Reader) error { return r.Skip(4, "x") }},
	{"Bytes", func(r *Reader) error { _, err := r.Bytes("x"); return err }},
	{"Name", func(r *Reader) error { _, err := r.Name("x"); return err }},
	{"Count", func(r *Reader) error { _, err := r.Count("x", 2); return err }},
	{"U32", func(r *Reader) error { _, err := r.U32("x"); return err }},
	{"S32", func(r *Reader) error { return r.S32("x") }},
	{"S64", func(r *Reader) error { return r.S64("x") }},
	{"S33", func(r *Reader) error { _, err := r.S33("x"); return err }},
	{"ValType", func(r *Reader) error { return r.ValType("x") }},
	{"GlobalType", func(r *Reader) error { return r.GlobalType() }},
	{"TagType", func(r *Reader) error { return r.TagType() }},
	{"ConstExpr", func(r *Reader) error { return r.ConstExpr() }},
}

// TestReadsStopAtEnd: every read of bytes that go on past End, and that would be well-formed if
// they were read, fails at End: no read looks past it.
func TestReadsStopAtEnd(t *testing.T) {
	// Each read's input is complete only with its last byte, which is past End.
	inputs := map[string][]byte{
		"Byte": {0x00}, "Zero": {0x00}, "Skip": {1, 2, 3, 4}, "Bytes": {0x01, 'a'}, "Name": {0x01, 'a'},
		"Count": {0x01, 0x00, 0x00}, "U32": {0x80, 0x01}, "S32": {0x80, 0x01}, "S64": {0x80, 0x01},
		"S33": {0x80, 0x01}, "ValType": {0x63, 0x00}, "GlobalType": {0x7f, 0x00}, "TagType": {0x00, 0x00},
		"ConstExpr": {0x41, 0x00, 0x0b},
	}
	for _, c := range reads {
		b := inputs[c.name]
		if err := c.read(&Reader{B: b, End: len(b)}); err != nil {
			t.Fatalf("%s of % x: %v", c.name, b, err)
		}
		r := &Reader{B: b, End: len(b) - 1}
		err := c.read(r)
		var e *Error
		if !errors.As(err, &e) || e.Offset > r.End || r.Pos > r.End {
			t.Errorf("%s of % x up to %d: %v, at %d", c.name, b, r.End, err, r.Pos)
		}
	}
}

// TestErrors: what each failed read says, and where: at the start of a count or a string that
// does not fit, at the start of a malformed integer, at the end for an end inside one.
func TestErrors(t *testing.T) {
	cases := []struct {
		b    []byte
		end  int // 0: len(b)
		read func(r *Reader) error
		off  int
		msg  string
	}{
		{[]byte{0x00}, 0, func(r *Reader) error { r.Pos = 1; _, err := r.Byte("id"); return err }, 1, "id: unexpected end"},
		{[]byte{0x01}, 0, func(r *Reader) error { return r.Zero("memory index") }, 0, "memory index: 0x01 where wazero requires a single 0x00"},
		{[]byte{1, 2, 3}, 0, func(r *Reader) error { return r.Skip(4, "f32.const") }, 0, "f32.const: 4 bytes needed, 3 left"},
		{[]byte{0x00, 0x05, 'a'}, 0, func(r *Reader) error { r.Pos = 1; _, err := r.Bytes("name"); return err }, 1, "name: 5 bytes declared, 1 left"},
		{[]byte{0x01, 0xff}, 0, func(r *Reader) error { _, err := r.Name("export name"); return err }, 0, "export name is not valid UTF-8"},
		{[]byte{0x01, 0xff}, 0, func(r *Reader) error { _, err := r.Bytes("export name"); return err }, -1, ""},
		{[]byte{0xe8, 0x07, 0, 0, 0}, 0, func(r *Reader) error { _, err := r.Count("imports", 2); return err }, 0, "imports: 1000 declared, but the 3 bytes left hold at most 1"},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, func(r *Reader) error { _, err := r.U32("count"); return err }, 0, "count: LEB128 longer than 5 bytes"},
		{[]byte{0x80, 0x80, 0x01}, 2, func(r *Reader) error { _, err := r.U32("size"); return err }, 0, "size: truncated LEB128"},
		{[]byte{0x80, 0x80, 0x01}, 2, func(r *Reader) error { return r.S32("i32.const") }, 2, "i32.const: unexpected end"},
		{[]byte{0x40}, 0, func(r *Reader) error { return r.ValType("local type") }, 0, "local type: invalid value type 0x40"},
		{[]byte{0x7f, 0x02}, 0, func(r *Reader) error { return r.GlobalType() }, 1, "global mutability 0x02 is not 0 or 1"},
		{[]byte{0x41, 0x01, 0x41, 0x02, 0x6a, 0x0b}, 0, func(r *Reader) error { return r.ConstExpr() }, 4, "opcode 0x6a in a constant expression"},
		{[]byte{0xfd, 0x0d}, 0, func(r *Reader) error { return r.ConstExpr() }, 0, "vector opcode 0x0d in a constant expression"},
		// ref.null of a type index: a u32 after the opcode, as wazero reads it.
		{[]byte{0xd0, 0x80, 0x01, 0x0b}, 0, func(r *Reader) error { return r.ConstExpr() }, -1, ""},
		{[]byte{0xd0, 0x6f, 0x0b}, 0, func(r *Reader) error { return r.ConstExpr() }, -1, ""},
	}
	for i, c := range cases {
		end := c.end
		if end == 0 {
			end = len(c.b)
		}
		err := c.read(&Reader{B: c.b, End: end})
		if c.off < 0 {
			if err != nil {
				t.Errorf("%d: % x: %v", i, c.b, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Offset != c.off || e.Msg != c.msg {
			t.Errorf("%d: % x: %#v, want %q at %d", i, c.b, err, c.msg, c.off)
		}
	}
}

func TestWithin(t *testing.T) {
	err := Within(Within(Errorf(3, "local type: unexpected end"), "function %d", 2), "code section")
	if want := "byte 3 (0x3): code section: function 2: local type: unexpected end"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	other := fmt.Errorf("a limit")
	if Within(other, "code section") != other || other.Error() != "a limit" {
		t.Error("Within changed an error that is not an *Error")
	}
}

func TestAppendU32(t *testing.T) {
	for _, v := range []uint32{0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 1<<21 - 1, 1 << 28, 1<<32 - 1} {
		b := AppendU32([]byte{0xaa}, v)
		got, next, err := leb128.U32(b, 1, len(b))
		if err != nil || got != v || next != len(b) || len(b)-1 != SizeU32(v) {
			t.Errorf("%d: % x read as %d (%v), size %d", v, b, got, err, SizeU32(v))
		}
	}
}

// FuzzReader: any sequence of reads of any bytes, up to any End, stays within End, fails only
// with an *Error at an offset within End, and returns only bytes before End. Count returns only
// counts whose elements fit.
//
//	go test ./internal/wasmbin/ -run '^$' -fuzz FuzzReader -fuzztime 60s
func FuzzReader(f *testing.F) {
	f.Add([]byte{0x41, 0x80, 0x01, 0x0b, 0x05, 'a', 'b'}, uint16(5), []byte{13, 3, 0})
	f.Add([]byte{0x03, 0x7f, 0x01, 0x00}, uint16(4), []byte{5, 11, 12})
	f.Fuzz(func(t *testing.T, b []byte, end uint16, ops []byte) {
		r := &Reader{B: b, End: min(int(end), len(b))}
		for _, op := range ops {
			before := *r
			var err error
			switch c := reads[int(op)%len(reads)]; c.name {
			case "Bytes":
				var s []byte
				if s, err = r.Bytes("x"); err == nil && (len(s) > 0 && &s[len(s)-1] != &b[r.Pos-1]) {
					t.Fatalf("Bytes returned % x, not the bytes before %d", s, r.Pos)
				}
			case "Count":
				var n uint32
				if n, err = r.Count("x", 3); err == nil && uint64(n)*3 > uint64(r.Left()) {
					t.Fatalf("Count %d with %d bytes left", n, r.Left())
				}
			default:
				err = c.read(r)
			}
			if r.Pos < before.Pos || r.Pos > r.End || r.End != before.End {
				t.Fatalf("%s moved from %d to %d (end %d)", reads[int(op)%len(reads)].name, before.Pos, r.Pos, r.End)
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Offset < before.Pos || e.Offset > r.End || strings.TrimSpace(e.Msg) == "" {
					t.Fatalf("%T %v from %d (end %d)", err, err, before.Pos, r.End)
				}
				return
			}
		}
	})
}
