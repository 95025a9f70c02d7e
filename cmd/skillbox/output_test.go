package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestClean(t *testing.T) {
	tests := map[string]string{
		"plain text":             "plain text",
		"two\nlines\tand tab":    "two lines and tab",
		"\x1b]0;PWNED\x07":       `\x1b]0;PWNED\x07`,
		"evil\u202egnp.exe":      `evil\u202egnp.exe`,
		"c1 \u009b control":      `c1 \x9b control`,
		"zero\u200bwidth joiner": `zero\u200bwidth joiner`,
		"del\x7f":                `del\x7f`,
		"line\u2028separator":    `line\u2028separator`,
		"tag \U000E0001":         `tag \ue0001`,
		"lone \x9b byte":         "lone \uFFFD byte",
		"é, 日本, 🙂":               "é, 日本, 🙂",
	}
	for in, want := range tests {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{\n  \"a\": \"plain é 日本 🙂\"\n}", "{\n  \"a\": \"plain é 日本 🙂\"\n}"},
		{`"evil` + "\u202e" + `gnp"`, `"evil\u202egnp"`},
		{`"` + "\u009b\x7f\u200e\u061c\u2066\u2029" + `"`, `"\u009b\u007f\u200e\u061c\u2066\u2029"`},
		{`"` + "\U000E0001" + `"`, `"\udb40\udc01"`},       // beyond the BMP: a surrogate pair
		{`"` + "\x9b\xff" + `"`, `"\ufffd\ufffd"`},         // invalid UTF-8: what a decoder reads
		{`"\u001b[2J\n\t\"\\"`, `"\u001b[2J\n\t\"\\"`},     // JSON's own escapes stay
		{`{"k` + "\u202e" + `":1}`, `{"k\u202e":1}`},       // keys too
		{"not JSON \x1b[2J\r", `not JSON \u001b[2J\u000d`}, // escaped all the same
	}
	for _, tc := range tests {
		got := cleanJSON([]byte(tc.in))
		if got != tc.want {
			t.Errorf("cleanJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// Valid JSON stays valid and means the same.
		var in, out any
		if json.Unmarshal([]byte(tc.in), &in) == nil {
			if err := json.Unmarshal([]byte(got), &out); err != nil || !jsonEqual(in, out) {
				t.Errorf("cleanJSON(%q) = %q means %v (%v), not %v", tc.in, got, out, err, in)
			}
		}
	}
}

// TestTerminalWriter writes a compiler's output split at every byte: a rune cut between two
// writes is escaped (or kept) whole.
func TestTerminalWriter(t *testing.T) {
	in := "main.c:1: error: \u202eevil\x1b[2J\u009b é🙂\n\tint x;\r\n"
	want := `main.c:1: error: \u202eevil\x1b[2J\x9b é🙂` + "\n\tint x;" + `\x0d` + "\n"
	for cut := 0; cut <= len(in); cut++ {
		var b bytes.Buffer
		w := &terminalWriter{w: &b}
		for _, part := range []string{in[:cut], in[cut:]} {
			if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("cut at %d: %q, want %q", cut, b.String(), want)
		}
	}
	// An incomplete rune at the very end comes out at Flush, as U+FFFD.
	var b bytes.Buffer
	w := &terminalWriter{w: &b}
	w.Write([]byte("x\xe2\x80"))
	if b.String() != "x" {
		t.Errorf("before Flush: %q", b.String())
	}
	w.Flush()
	if b.String() != "x\uFFFD\uFFFD" {
		t.Errorf("after Flush: %q", b.String())
	}
}
