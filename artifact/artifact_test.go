package artifact_test

import (
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/artifact"
)

// A name is a clean relative slash path of at most MaxNameBytes of valid UTF-8, with no control
// character, backslash or double quote; ValidPath asks the same of any path but its shape.
func TestValidName(t *testing.T) {
	longest := strings.Repeat("a", artifact.MaxNameBytes)
	for _, tc := range []struct {
		in         string
		path, name bool // what ValidPath and ValidName say
	}{
		{"report.pdf", true, true},
		{"charts/a.png", true, true},
		{"résumé ✓.txt", true, true},
		{longest, true, true},
		{longest + "a", false, false},
		{"", false, false},
		{"/etc/passwd", true, false},
		{"a//b", true, false},
		{"a/", true, false},
		{"./a", true, false},
		{"../a", true, false},
		{"a/../b", true, false},
		{"a\\b", false, false},
		{`a"b`, false, false},
		{"a\nb", false, false},
		{"a\x00b", false, false},
		{"a\u0085b", false, false}, // a C1 control
		{"a\xffb", false, false},   // not UTF-8
	} {
		if got := artifact.ValidPath(tc.in); got != tc.path {
			t.Errorf("ValidPath(%.40q) = %v", tc.in, got)
		}
		if got := artifact.ValidName(tc.in); got != tc.name {
			t.Errorf("ValidName(%.40q) = %v", tc.in, got)
		}
	}
}
