package skillmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/docbound"
)

// FuzzParse: Parse never panics; what it accepts has a description, and a name unless a warning
// says it is missing (the caller names the skill after its directory), is JSON-safe and
// within internal/docbound's bounds; what it refuses is an *Error matching ErrInvalid;
// ParseMeta agrees with it on the metadata.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"---\nname: a\ndescription: b\n---\nbody $ARGUMENTS\n",
		"\xef\xbb\xbf---\r\nname: a\r\ndescription: b\r\n---\r\n",
		"---\nname: a\ndescription: b: c\n---\n",
		"---\n- a\n---\n",
		"---\nname: [a]\n---\n",
		"---\nname: a\ndescription: b\nallowed-tools: Read, Bash(git add:*)\nmetadata: {k: v}\nx: {1: .nan}\n---\n",
		"---\na: &x [*x, *x]\nb: &y [*x, *x]\n---\n",
		"---\nname: a\n",
		"---\nname: a\ndescription: b\nmetadata: {a: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}\n---\n",
		frontmatterAliasBomb(),
		"# Title\n\nNo frontmatter at all.\n",
		"---\ndescription: Use this when: asked\n  and more: here\nargument-hint: [a] [b]\n---\n",
		"\n\n---\nname: a\n---\nfirst paragraph\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse("SKILL.md", data)
		m, merr := ParseMeta("SKILL.md", data)
		if (err == nil) != (merr == nil) {
			t.Fatalf("Parse %v, ParseMeta %v", err, merr)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) || e.Error() == "" {
				t.Fatalf("%T %v", err, err)
			}
			return
		}
		if strings.TrimSpace(d.Description) == "" || (strings.TrimSpace(d.Name) == "" && len(d.Warnings) == 0) {
			t.Fatalf("accepted without a name or description: %#v", d)
		}
		if m.Name != d.Name || m.Description != d.Description || m.Body != "" || len(m.Warnings) != len(d.Warnings) {
			t.Fatalf("ParseMeta %#v, Parse %#v", m, d)
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("not JSON-safe: %v", err)
		}
		// Within internal/docbound's bounds: the frontmatter is level 1, its fields level 2.
		for name, m := range map[string]map[string]any{"metadata": d.Metadata, "extra": d.Extra} {
			if depth, values := measure(m); depth > docbound.MaxDepth-1 || values > docbound.MaxValues {
				t.Fatalf("%s of depth %d and %d values", name, depth, values)
			}
		}
	})
}

// measure returns how deeply v nests (scalars add no level) and how many values it holds: an
// independent count of what docbound bounds.
func measure(v any) (depth, values int) {
	values = 1
	switch t := v.(type) {
	case map[string]any:
		depth = 1
		for _, e := range t {
			d, n := measure(e)
			depth, values = max(depth, d+1), values+n
		}
	case []any:
		depth = 1
		for _, e := range t {
			d, n := measure(e)
			depth, values = max(depth, d+1), values+n
		}
	}
	return depth, values
}

// FuzzRender: the output always starts with the base-directory line and a blank line, then the
// dynamic-context note when the body has some; a body without '$' or '\' is kept whole (the
// arguments appended when there are some); and when a body's only placeholders are plain
// $ARGUMENTS, every one is replaced. The last is checked where it can be seen in the output:
// when the arguments hold no '$', no "$ARGUMENTS" can remain (see Render's notes for why '$'
// around a placeholder matters).
func FuzzRender(f *testing.F) {
	f.Add("Review $ARGUMENTS", "/skills/x", "main.py")
	f.Add("no placeholder", "/d", "args")
	f.Add("$ARGUMENTS$ARGUMENTS", "", "")
	f.Add("$$ARGUMENTSARGUMENTS", "/d", "")
	f.Add("$arguments", "/d", "$ARGUMENTS")
	f.Add("$0 $ARGUMENTS[1] ${CLAUDE_SKILL_DIR} \\$2 !`ls`", "/d", `"a b" c 'd'`)
	f.Fuzz(func(t *testing.T, body, baseDir, args string) {
		out := Render(body, baseDir, args)
		head := "Base directory for this skill: " + baseDir + "\n\n"
		if HasDynamicContext(body) {
			head += DynamicContextNote + "\n\n"
		}
		if !strings.HasPrefix(out, head) {
			t.Fatalf("no base-directory line: %q", out)
		}
		rest := out[len(head):]
		n := strings.Count(body, Placeholder)
		switch {
		case !strings.ContainsAny(body, `$\`) && args == "":
			if rest != body {
				t.Fatalf("body changed: %q", rest)
			}
		case !strings.ContainsAny(body, `$\`):
			if rest != body+"\n\nARGUMENTS: "+args {
				t.Fatalf("arguments not appended: %q", rest)
			}
		case n > 0 && strings.Count(body, "$") == n && !strings.Contains(body, `\`) && !strings.Contains(body, Placeholder+"["):
			if want := len(body) + n*(len(args)-len(Placeholder)); len(rest) != want {
				t.Fatalf("%d bytes, want %d: %q", len(rest), want, rest)
			}
			if !strings.Contains(args, "$") && strings.Contains(rest, Placeholder) {
				t.Fatalf("a placeholder remains: %q", rest)
			}
		}
	})
}
