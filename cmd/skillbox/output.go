package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// clean makes text from a skill package safe to print in a table or a terminal: control
// characters (tabs and newlines included, which would forge columns and rows) become spaces or
// \xNN, so a manifest cannot write escape sequences to the operator's terminal.
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case unicode.IsControl(r) && r < 0x100:
			fmt.Fprintf(&b, "\\x%02x", r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			// Format characters include the bidi overrides, which can reorder what a reader sees.
			fmt.Fprintf(&b, "\\u%04x", r)
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
