package skillmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzFrontmatter checks that any file either gives a frontmatter that encodes as JSON, with a
// name and description of text, or an *Error matching ErrInvalid; never a panic, and never a
// walk the bounds did not limit (the alias bomb among the seeds).
func FuzzFrontmatter(f *testing.F) {
	for _, s := range []string{
		"",
		"---\nname: a\ndescription: b\n---\nbody\n",
		"---\nname: a\ndescription: b\nx: 017\ny: 2024-01-01\nz: .inf\n---\n",
		"---\nname: a\ndescription: b\nk: {1: a, true: b, ~: c}\n---\n",
		"---\nname: a\ndescription: b\nbase: &b {k: v}\nm: {<<: *b}\n---\n",
		"---\nname: a\ndescription: b\nn: !!int abc\nf: !!float 1\ns: !custom 3\n---\n",
		"---\na: &x [*x, *x]\nname: a\ndescription: b\n---\n",
		"\xef\xbb\xbf---\nname: a\ndescription: b\n---\n",
		frontmatterAliasBomb(),
		"---\nname: a\ndescription: b\nmetadata: {a: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Frontmatter("SKILL.md", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) || e.Error() == "" {
				t.Fatalf("%T %v", err, err)
			}
			return
		}
		if _, ok := m["name"].(string); !ok {
			t.Fatalf("name %v", m["name"])
		}
		if _, ok := m["description"].(string); !ok {
			t.Fatalf("description %v", m["description"])
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("the frontmatter does not encode: %v", err)
		}
	})
}
