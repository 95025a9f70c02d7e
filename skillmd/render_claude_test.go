package skillmd

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRenderClaude renders testdata/render-claude/SKILL.md as Claude Code renders it (indexed
// arguments split shell-style, ${CLAUDE_SKILL_DIR} and its alias, an escaped placeholder, an
// index with no word left as written) and checks that its !`command` line is shown, not run,
// with the note that says so.
func TestRenderClaude(t *testing.T) {
	dir := filepath.Join("testdata", "render-claude")
	data, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "want.md"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("SKILL.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if d.ArgumentHint != "<component> <from> <to>" {
		t.Errorf("argument-hint %q", d.ArgumentHint)
	}
	if got := Render(d.Body, "/skills/migrate-component", `"my widget" React Vue`); got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRenderIndexedArguments(t *testing.T) {
	const head = "Base directory for this skill: /d\n\n"
	tests := []struct {
		name, body, args, want string
	}{
		{"$N is 0-based", "$0 then $1", "a b", "a then b"},
		{"$ARGUMENTS[N] is the same", "$ARGUMENTS[0]/$ARGUMENTS[1]", "a b", "a/b"},
		{"several digits", "$10", "0 1 2 3 4 5 6 7 8 9 ten", "ten"},
		{"an index with no word is left as written, and the arguments appended", "awk '{print $1}'", "one", "awk '{print $1}'\n\nARGUMENTS: one"},
		{"no arguments: nothing changes, nothing appended", "$0 $1 $ARGUMENTS[2]", "", "$0 $1 $ARGUMENTS[2]"},
		{"$N followed by a word character is not a placeholder", "$1a $1_ $0", "x y", "$1a $1_ x"},
		{"$N before punctuation is", "$0.10 and $1,", "x y", "x.10 and y,"},
		{"a backslash escapes", `\$0 \$ARGUMENTS \${SKILL_DIR} \$HOME \n`, "x", `$0 $ARGUMENTS ${SKILL_DIR} \$HOME \n` + "\n\nARGUMENTS: x"},
		{"base directory, both names", "${CLAUDE_SKILL_DIR}/a ${SKILL_DIR}/b ${OTHER}", "", "/d/a /d/b ${OTHER}"},
		{"a used index means nothing is appended", "First: $0", "a b", "First: a"},
		{"$ARGUMENTS[x] is $ARGUMENTS then text", "$ARGUMENTS[x]", "a", "a[x]"},
		{"a huge index is no word", "$99999999999999999999", "a", "$99999999999999999999\n\nARGUMENTS: a"},
		{"words are not substituted again", "$0 $1", "$1 x", "$1 x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Render(tc.body, "/d", tc.args); got != head+tc.want {
				t.Errorf("got  %q\nwant %q", got, head+tc.want)
			}
		})
	}
}

func TestRenderDynamicContext(t *testing.T) {
	for body, has := range map[string]bool{
		"Status: !`git status`":             true,
		"```!\ngit log -1\n```":             true,
		"  ```!\nls\n```":                   true,
		"Not it: ! `x`, `!x`, !``":          false,
		"```sh\n!echo no\n```":              false,
		"Wow!`code` right after a bang: ok": true,
	} {
		if HasDynamicContext(body) != has {
			t.Errorf("HasDynamicContext(%q) = %v", body, !has)
		}
		out := Render(body, "/d", "")
		if has != (out == "Base directory for this skill: /d\n\n"+DynamicContextNote+"\n\n"+body) {
			t.Errorf("Render(%q) = %q", body, out)
		}
	}
}

func TestSplitArguments(t *testing.T) {
	for in, want := range map[string][]string{
		"":                        nil,
		"  a  b\tc\n":             {"a", "b", "c"},
		`"my widget" React`:       {"my widget", "React"},
		`'it''s' x`:               {"its", "x"},
		`a"b c"d`:                 {"ab cd"},
		`"say \"hi\"" \\ C:\dir`:  {`say "hi"`, `\\`, `C:\dir`},
		`"" x`:                    {"", "x"},
		`"unclosed quote runs on`: {"unclosed quote runs on"},
		`'single unclosed`:        {"single unclosed"},
		`"\\" '\'`:                {`\`, `\`},
	} {
		if got := SplitArguments(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitArguments(%q) = %q, want %q", in, got, want)
		}
	}
}
