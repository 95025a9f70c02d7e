package wasmcheck

import (
	"bytes"
	"errors"
	"testing"
)

// nameSec is a "name" custom section of the given subsections.
func nameSec(subs ...[]byte) []byte { return sec(0, str("name"), cat(subs...)) }

// sub is a name subsection: id, size, contents.
func sub(id byte, contents ...[]byte) []byte {
	c := cat(contents...)
	return cat([]byte{id}, leb(uint64(len(c))), c)
}

type nameCase struct {
	name  string
	names []byte // the name section(s)
	drop  error  // nil: kept; else the error NamesError wraps
	// wazeroRefuses: wazero refuses the module with this name section (and the test checks that,
	// and that it takes the output). Left false where handing it the input would be the bomb.
	wazeroRefuses bool
}

func nameCases() []nameCase {
	good := nameSec(sub(0, str("m")), sub(1, vec(cat(leb(0), str("f")))), sub(2, vec(cat(leb(0), vec(cat(leb(0), str("x")))))))
	return []nameCase{
		{"well-formed", good, nil, false},
		{"empty", nameSec(), nil, false},
		{"an unknown subsection is skipped", nameSec(sub(1, vec()), sub(7, []byte{0xff, 0xff})), nil, false},
		{"2^32-1 local names", nameSec(sub(2, vec(cat(leb(0), leb(huge))))), ErrLimit, false},
		{"2^32-1 functions with local names", nameSec(sub(2, leb(huge))), ErrLimit, false},
		{"2^32-1 function names", nameSec(sub(1, leb(huge))), ErrLimit, false},
		{"local names over their bytes", nameSec(sub(2, vec(cat(leb(0), leb(1000))))), ErrMalformed, false},
		{"a name of 2^32-1 bytes", nameSec(sub(0, leb(huge))), ErrMalformed, false},
		{"a subsection over the section", nameSec(cat([]byte{0x01, 0x10}, vec())), ErrMalformed, false},
		{"a subsection longer than its contents", nameSec(sub(1, vec(), []byte{0x00})), ErrMalformed, true},
		{"a truncated LEB128", nameSec(sub(1, []byte{0x80})), ErrMalformed, true},
		{"subsections out of order", nameSec(sub(1, vec()), sub(0, str("m"))), ErrMalformed, false},
		{"a function name not UTF-8", nameSec(sub(1, vec(cat(leb(0), str("\xff"))))), ErrMalformed, true},
		{"a second name section", cat(good, good), ErrMalformed, true},
	}
}

// TestNameSection: a name section that is malformed or over a limit is dropped from the returned
// module, every other byte kept; one that passes is kept.
func TestNameSection(t *testing.T) {
	for _, c := range nameCases() {
		t.Run(c.name, func(t *testing.T) {
			in := mod(typeVoid, oneFunc, oneBody, c.names)
			info, out, err := Check(in, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if c.drop == nil {
				if info.NamesDropped != 0 || !bytes.Equal(out, in) || info.Changed {
					t.Fatalf("dropped %d (%v)", info.NamesDropped, info.NamesError)
				}
				return
			}
			want := mod(typeVoid, oneFunc, oneBody)
			if c.name == "a second name section" {
				want = mod(typeVoid, oneFunc, oneBody, c.names[:len(c.names)/2])
			}
			if info.NamesDropped != 1 || !errors.Is(info.NamesError, c.drop) || !bytes.Equal(out, want) || !info.Changed {
				t.Fatalf("dropped %d (%v), out % x", info.NamesDropped, info.NamesError, out)
			}
			t.Log(info.NamesError)
			assertIdempotent(t, out, Limits{})
			if a := allocated(20, func() { Check(in, Limits{}) }); a > 64<<10 {
				t.Errorf("Check of %d bytes allocated %d bytes", len(in), a)
			}
		})
	}
}
