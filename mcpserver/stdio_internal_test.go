package mcpserver

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// lines reads lr to its end: each line as itself, errLineTooLong as "<too long>".
func lines(t *testing.T, lr *lineReader) []string {
	t.Helper()
	var got []string
	for range 1000 {
		line, err := lr.next()
		switch {
		case errors.Is(err, errLineTooLong):
			got = append(got, "<too long>")
		case errors.Is(err, io.EOF):
			return got
		case err != nil:
			t.Fatalf("next: %v", err)
		default:
			if cap(line) > lr.max {
				t.Errorf("line of %d bytes held in %d bytes of capacity, over the bound %d", len(line), cap(line), lr.max)
			}
			got = append(got, string(line))
		}
	}
	t.Fatal("lineReader does not end")
	return nil
}

// TestLineReaderBound crosses the bound of a line by one byte and by many buffers' worth, with
// the input arriving whole and one byte at a time.
func TestLineReaderBound(t *testing.T) {
	long := strings.Repeat("x", 3*stdioReadBuffer+5)
	cases := []struct {
		name, in string
		bound    int
		want     []string
	}{
		// One byte at a time, append would grow the line to 1024 bytes of capacity.
		{"at a bound that is no power of two", strings.Repeat("y", 1000) + "\n", 1000, []string{strings.Repeat("y", 1000)}},
		{"at the bound", "12345678\nab\n", 0, []string{"12345678", "ab"}},
		{"one over", "123456789\nab\n", 0, []string{"<too long>", "ab"}},
		{"a CR counts", "1234567\r\n1234567\n", 0, []string{"1234567\r", "1234567"}},
		{"many buffers over", long + "\nab\n" + long + "\n", 0, []string{"<too long>", "ab", "<too long>"}},
		{"over at the end of input", "ab\n123456789", 0, []string{"ab", "<too long>"}},
		{"many buffers over at the end of input", "ab\n" + long, 0, []string{"ab", "<too long>"}},
		{"no newline at the end", "ab\ncd", 0, []string{"ab", "cd"}},
		{"empty lines", "\n\nab\n", 0, []string{"", "", "ab"}},
		{"empty input", "", 0, nil},
	}
	for _, tc := range cases {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			bound := tc.bound
			if bound == 0 {
				bound = 8
			}
			got := lines(t, newLineReader(r, func() int { return bound }))
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("%s (one byte at a time: %v): lines %q, want %q", tc.name, oneByte, got, tc.want)
			}
		}
	}
}

// endless is a line that never ends; it counts what was read of it.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.read += len(p)
	return len(p), nil
}

// TestLineReaderRefusesBeforeTheEnd: a line without end is refused once it crosses the bound,
// having read no more of it than the bound and one buffer.
func TestLineReaderRefusesBeforeTheEnd(t *testing.T) {
	src := &endless{}
	const bound = 8 << 20
	lr := newLineReader(src, func() int { return bound })
	if _, err := lr.next(); !errors.Is(err, errLineTooLong) {
		t.Fatalf("next: %v, want errLineTooLong", err)
	}
	if src.read > bound+stdioReadBuffer {
		t.Errorf("read %d bytes of the line before refusing it, over the bound %d and one buffer", src.read, bound)
	}
	if lr.lines != 1 {
		t.Errorf("line number %d, want 1", lr.lines)
	}
}
