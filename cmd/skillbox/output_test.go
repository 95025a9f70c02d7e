package main

import "testing"

func TestClean(t *testing.T) {
	tests := map[string]string{
		"plain text":             "plain text",
		"two\nlines\tand tab":    "two lines and tab",
		"\x1b]0;PWNED\x07":       `\x1b]0;PWNED\x07`,
		"evil\u202egnp.exe":      `evil\u202egnp.exe`,
		"c1 \u009b control":      `c1 \x9b control`,
		"zero\u200bwidth joiner": `zero\u200bwidth joiner`,
	}
	for in, want := range tests {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}
