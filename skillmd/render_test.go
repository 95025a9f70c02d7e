package skillmd

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestRender covers rendering a SKILL.md body for an invocation: the base directory line first,
// every $ARGUMENTS replaced (case-sensitively) or the arguments appended, and the edge cases.
func TestRender(t *testing.T) {
	const dir = "/skills/review"
	const head = "Base directory for this skill: /skills/review\n\n"
	tests := []struct {
		name       string
		body, args string
		want       string
	}{
		{"placeholder replaced, base directory included",
			"Review this: $ARGUMENTS\n", "review main.py", head + "Review this: review main.py\n"},
		{"no placeholder: the arguments are appended",
			"Review the code.\n", "test input", head + "Review the code.\n\n\nARGUMENTS: test input"},
		{"empty arguments replace the placeholder with nothing",
			"Review $ARGUMENTS now", "", head + "Review  now"},
		{"base directory first, even with no body and no arguments",
			"", "", head},
		{"empty arguments, no placeholder: nothing appended",
			"Just do it.", "", head + "Just do it."},
		{"edge: every occurrence is replaced",
			"$ARGUMENTS, then $ARGUMENTS again: $ARGUMENTS$ARGUMENTS", "x", head + "x, then x again: xx"},
		{"edge: placeholder and no trailing newline: replaced, nothing appended",
			"Do $ARGUMENTS", "it", head + "Do it"},
		{"case-sensitive: $arguments and $Arguments are left alone, so the arguments are appended",
			"Do $arguments and $Arguments", "it", head + "Do $arguments and $Arguments\n\nARGUMENTS: it"},
		{"a lowercase one beside a real one: only the real one changes",
			"$arguments / $ARGUMENTS", "it", head + "$arguments / it"},
		{"arguments containing the placeholder are not substituted again",
			"<$ARGUMENTS>", "$ARGUMENTS $ARGUMENTS", head + "<$ARGUMENTS $ARGUMENTS>"},
		{"a longer word starting with the placeholder is still replaced in part",
			"$ARGUMENTSX", "a", head + "aX"},
		{"arguments with newlines are used as they are",
			"A: $ARGUMENTS", "one\ntwo", head + "A: one\ntwo"},
		{"CRLF body kept",
			"line\r\n$ARGUMENTS\r\n", "x", head + "line\r\nx\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Render(tc.body, dir, tc.args); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRenderDoesNotModifyTheFile checks that rendering works on the parsed body, never the file.
func TestRenderDoesNotModifyTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "SKILL.md")
	orig := "---\nname: a\ndescription: b\n---\nDo $ARGUMENTS\n"
	if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	d, err := Parse(p, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := Render(d.Body, filepath.Dir(p), "it"); got != "Base directory for this skill: "+filepath.Dir(p)+"\n\nDo it\n" {
		t.Errorf("got %q", got)
	}
	after, _ := os.ReadFile(p)
	if string(after) != orig {
		t.Errorf("the file changed: %q", after)
	}
}

func ExampleRender() {
	doc, _ := Parse("SKILL.md", []byte("---\nname: review\ndescription: Reviews code\n---\n\nReview $ARGUMENTS carefully.\n"))
	fmt.Print(Render(doc.Body, "/skills/review", "main.py"))
	fmt.Println("--")
	fmt.Print(Render("Review the diff.", "/skills/review", "main.py"))
	// Output:
	// Base directory for this skill: /skills/review
	//
	// Review main.py carefully.
	// --
	// Base directory for this skill: /skills/review
	//
	// Review the diff.
	//
	// ARGUMENTS: main.py
}
