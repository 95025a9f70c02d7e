package skillmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frontmatterAliasBomb is a "billion laughs" in metadata that yaml.v3's own alias limit lets
// through (it allows 99% of a document's values to come from aliases while it holds under
// 400,000): 5,000 plain values first, then anchors of 10, 100 and 1,000 values, then 300 aliases
// standing for 333,000 more. About 12 kB, within MetaLimit.
func frontmatterAliasBomb() string {
	var b strings.Builder
	b.WriteString("---\nname: bomb\ndescription: d\nmetadata:\n")
	fmt.Fprintf(&b, "  pad: [%s]\n  l0: &l0 [%s]\n", strings.TrimSuffix(strings.Repeat("0,", 5_000), ","), strings.TrimSuffix(strings.Repeat("x,", 10), ","))
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	fmt.Fprintf(&b, "  bomb: [%s]\n---\nbody\n", strings.TrimSuffix(strings.Repeat("*l2,", 300), ","))
	return b.String()
}

// Frontmatter is bounded like a manifest (internal/docbound): a field that nests too deeply or
// makes it hold too many values is reported at its line and path, beside the other problems,
// and not again as missing.
func TestFrontmatterBounds(t *testing.T) {
	var block strings.Builder // metadata nested 40 mappings deep, block style
	block.WriteString("---\nname: deep\nmetadata:\n")
	for i := range 40 {
		fmt.Fprintf(&block, "%sk%d:\n", strings.Repeat("  ", i+1), i)
	}
	fmt.Fprintf(&block, "%sv\n---\n", strings.Repeat("  ", 41))
	cases := []struct {
		name, data string
		want       []Error // Line, Field, Msg prefix of each problem
	}{
		{"deep flow", "---\nname: deep\ndescription: d\nmetadata: {a: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}\n---\n",
			[]Error{{Line: 4, Field: "metadata.a[0][0][0]...(25 more)...[0][0]", Msg: "nests deeper than 32 levels"}}},
		{"deep block, and no description", block.String(), []Error{
			{Line: 35, Field: "metadata.k0.k1.k2.k3...(25 more)...k29.k30", Msg: "nests deeper than 32 levels"},
			{Line: 0, Field: "description", Msg: "is required"}}},
		{"deep name is not also missing", "---\nname: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\ndescription: d\n---\n",
			[]Error{{Line: 2, Field: "name[0][0][0][0]...(25 more)...[0][0]", Msg: "nests deeper than 32 levels"}}},
		{"alias bomb", frontmatterAliasBomb(),
			[]Error{{Line: 6, Field: "metadata.bomb[3][3][8]", Msg: "the document holds more than 10,000 values"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) > MetaLimit {
				t.Fatalf("%d bytes: more than MetaLimit", len(tc.data))
			}
			for parse, f := range map[string]func(string, []byte) (*Doc, error){"Parse": Parse, "ParseMeta": ParseMeta} {
				_, err := f(path, []byte(tc.data))
				var e *Error
				if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s: accepted (%v)", parse, err)
				}
				got := e.All()
				if len(got) != len(tc.want) {
					t.Fatalf("%s: %v", parse, err)
				}
				for i, w := range tc.want {
					g := got[i]
					if g.Line != w.Line || g.Field != w.Field || !strings.HasPrefix(g.Msg, w.Msg) || g.Hint == "" || g.Path != path {
						t.Errorf("%s: problem %d: %+v, want %+v", parse, i, g, w)
					}
				}
			}
		})
	}
}

// The bundled skills' SKILL.md files still parse.
func TestBundledSkillsParse(t *testing.T) {
	files, _ := filepath.Glob("../skills/*/SKILL.md")
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(f, data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
