package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Everything a skill controls (its manifest, its result, its source as a compiler quotes it) is
// escaped here before it reaches a person's terminal; --json output is left exact, for programs.

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// unsafeRune reports whether r must not reach a terminal as it is: the C0 and C1 controls and DEL
// (escape sequences start with ESC, or with U+009B, a CSI on some terminals), format characters
// (Unicode Cf: the bidi overrides, embeddings, isolates and marks, which reorder what a reader
// sees, and zero-width characters, which hide text) and the line and paragraph separators.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// clean makes text from a skill package safe to print in a table or a terminal: control
// characters (tabs and newlines included, which would forge columns and rows) become spaces or
// \xNN, so a manifest cannot write escape sequences to the operator's terminal; the other unsafe
// runes become \uNNNN, invalid UTF-8 U+FFFD.
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case unsafeRune(r):
			writeEscaped(&b, r)
		default:
			b.WriteRune(r) // an invalid byte comes as utf8.RuneError: U+FFFD
		}
	}
	return b.String()
}

// writeEscaped writes r as \xNN below U+0100, else as \uNNNN.
func writeEscaped(b *strings.Builder, r rune) {
	if r < 0x100 {
		fmt.Fprintf(b, "\\x%02x", r)
		return
	}
	fmt.Fprintf(b, "\\u%04x", r)
}

// cleanJSON makes JSON text from a skill (its result, its argument schema) safe to print for a
// person while keeping it JSON that means the same: every unsafe rune becomes a \uXXXX escape (a
// surrogate pair beyond the BMP) and every invalid UTF-8 byte \ufffd, what a JSON decoder reads
// there. In valid JSON such runes can only stand inside strings, where the escapes mean them; the
// newlines of the indentation stay. Text that is not JSON is escaped the same way.
func cleanJSON(data []byte) string {
	var b strings.Builder
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\ufffd`)
		case unsafeRune(r):
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.Write(data[:size])
		}
		data = data[size:]
	}
	return b.String()
}

// terminalWriter passes a tool's output to a person's terminal (a compiler's diagnostics quote
// the skill's source, bidi overrides and all): newlines and tabs stay, the other unsafe runes are
// escaped as clean escapes them. A rune split between two writes is held for the next; Flush
// writes what is held.
type terminalWriter struct {
	w    io.Writer
	held []byte
}

func (t *terminalWriter) Write(p []byte) (int, error) {
	data := append(t.held, p...)
	// Hold back an incomplete UTF-8 sequence at the end: its rest comes with the next write.
	keep := 0
	for i := len(data) - 1; i >= 0 && i > len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				keep = len(data) - i
			}
			break
		}
	}
	t.held = append([]byte(nil), data[len(data)-keep:]...)
	if _, err := io.WriteString(t.w, cleanLines(data[:len(data)-keep])); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held incomplete rune, as U+FFFD.
func (t *terminalWriter) Flush() error {
	if len(t.held) == 0 {
		return nil
	}
	_, err := io.WriteString(t.w, cleanLines(t.held))
	t.held = nil
	return err
}

// cleanLines is clean for multi-line text: newlines and tabs stay.
func cleanLines(data []byte) string {
	var b strings.Builder
	for _, r := range string(data) {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unsafeRune(r):
			writeEscaped(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// truncate shortens s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
