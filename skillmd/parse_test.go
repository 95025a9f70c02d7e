package skillmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

const path = "skills/x/SKILL.md"

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  Doc
	}{
		{
			name:  "minimal",
			given: "---\nname: pdf\ndescription: Reads PDFs\n---\n# PDF\n\nUse it.\n",
			want:  Doc{Name: "pdf", Description: "Reads PDFs", Body: "# PDF\n\nUse it.\n"},
		},
		{
			name:  "blank lines after the frontmatter are dropped, the rest is kept",
			given: "---\nname: a\ndescription: b\n---\n\n  \n  indented\n\n",
			want:  Doc{Name: "a", Description: "b", Body: "  indented\n\n"},
		},
		{
			name:  "no body",
			given: "---\nname: a\ndescription: b\n---",
			want:  Doc{Name: "a", Description: "b"},
		},
		{
			name:  "CRLF and a byte order mark",
			given: "\xef\xbb\xbf---\r\nname: a\r\ndescription: b\r\n---\r\nline one\r\nline two\r\n",
			want:  Doc{Name: "a", Description: "b", Body: "line one\r\nline two\r\n"},
		},
		{
			name:  "delimiters with trailing blanks",
			given: "--- \nname: a\ndescription: b\n---\t\nbody",
			want:  Doc{Name: "a", Description: "b", Body: "body"},
		},
		{
			name:  "a --- inside the body stays",
			given: "---\nname: a\ndescription: b\n---\nx\n---\ny\n",
			want:  Doc{Name: "a", Description: "b", Body: "x\n---\ny\n"},
		},
		{
			name:  "block scalar description is trimmed",
			given: "---\nname: a\ndescription: >\n  Two\n  lines\n---\n",
			want:  Doc{Name: "a", Description: "Two lines"},
		},
		{
			name: "every optional field",
			given: "---\nname: a\ndescription: b\nlicense: MIT\ncompatibility: needs python3\n" +
				"metadata:\n  author: me\n  version: \"1.0\"\nallowed-tools: [Read, Grep]\n---\n",
			want: Doc{Name: "a", Description: "b", License: "MIT", Compatibility: "needs python3",
				Metadata: map[string]any{"author": "me", "version": "1.0"}, AllowedTools: []string{"Read", "Grep"}},
		},
		{
			name:  "allowed-tools as Claude Code writes it",
			given: "---\nname: a\ndescription: b\nallowed-tools: Read, Grep  Bash(git add:*), Bash(npm run test:*)\n---\n",
			want:  Doc{Name: "a", Description: "b", AllowedTools: []string{"Read", "Grep", "Bash(git add:*)", "Bash(npm run test:*)"}},
		},
		{
			name:  "allowed-tools space separated",
			given: "---\nname: a\ndescription: b\nallowed-tools: Read Write\n---\n",
			want:  Doc{Name: "a", Description: "b", AllowedTools: []string{"Read", "Write"}},
		},
		{
			name:  "unknown keys are kept in Extra, JSON-safe",
			given: "---\nname: a\ndescription: b\nversion: 2\ntags: [x, y]\nodd: {1: one}\nweird: .nan\n---\n",
			want: Doc{Name: "a", Description: "b", Extra: map[string]any{"version": 2, "tags": []any{"x", "y"},
				"odd": map[string]any{"1": "one"}, "weird": "NaN"}},
		},
		{
			name:  "names are used as they are",
			given: "---\nname: My Skill!\ndescription: b\n---\n",
			want:  Doc{Name: "My Skill!", Description: "b"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(path, []byte(tc.given))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", *got, tc.want)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("not JSON-safe: %v", err)
			}
			meta, err := ParseMeta(path, []byte(tc.given))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Body = ""
			if !reflect.DeepEqual(*meta, want) {
				t.Errorf("ParseMeta: got %#v", *meta)
			}
		})
	}
}

// TestParseErrors: what makes a SKILL.md unusable. What Claude Code loads (no frontmatter, no name,
// an unquoted ": ") was here as an error and loads now, with a warning: see TestParseLenient.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string // the whole Error()
		count int    // len(All())
	}{
		{"empty file", "",
			`skills/x/SKILL.md: is empty: a SKILL.md needs frontmatter with "name" and "description" (start the file with a line "---", then "name: ..." and "description: ...", then a line "---")`, 1},
		{"blank file", " \n\r\n",
			`skills/x/SKILL.md: is empty: a SKILL.md needs frontmatter with "name" and "description" (start the file with a line "---", then "name: ..." and "description: ...", then a line "---")`, 1},
		{"unterminated", "---\nname: a\ndescription: b\n",
			`skills/x/SKILL.md:1: the frontmatter is not closed (add a line with only "---" after the last field)`, 1},
		{"unclosed list", "---\nname: a\ndescription: b\nallowed-tools: [Read\n---\n",
			`skills/x/SKILL.md:4: malformed YAML: did not find expected ',' or ']' (fix the YAML syntax there)`, 1},
		{"duplicate key", "---\nname: a\nname: b\ndescription: c\n---\n",
			`skills/x/SKILL.md:3: malformed YAML: mapping key "name" already defined at line 2 (keep one of the two)`, 1},
		{"unclosed list on the first line", "---\nallowed-tools: [Read\nname: a\n---\n",
			`skills/x/SKILL.md:3: malformed YAML: did not find expected ',' or ']' (fix the YAML syntax there)`, 1},
		{"no value after a key", "---\nname: a\ndescription: b\nx: [\n---\n",
			`skills/x/SKILL.md:5: malformed YAML: did not find expected node content (fix the YAML syntax there)`, 1},
		{"a tab", "---\nname: a\n\tdescription: b\n---\n",
			"skills/x/SKILL.md:3: malformed YAML: found a tab character that violates indentation (indent with spaces, not tabs)", 1},
		{"a backquote", "---\nname: a\ndescription: `b`\n---\n",
			"skills/x/SKILL.md:3: malformed YAML: found character that cannot start any token (quote a value that starts with @ or `, and indent with spaces, not tabs)", 1},
		{"many duplicate keys", "---\nname: a\ndescription: b\n" + strings.Repeat("x: 1\n", 8) + "---\n",
			`skills/x/SKILL.md: malformed YAML: line 5: mapping key "x" already defined at line 4; line 6: mapping key "x" already defined at line 4; ` +
				`line 7: mapping key "x" already defined at line 4; line 8: mapping key "x" already defined at line 4; ` +
				`line 9: mapping key "x" already defined at line 4; and 2 more (keep one of the two)`, 1},
		{"duplicates in a nested mapping", "---\nname: a\ndescription: b\nmetadata:\n  k: 1\n  k: 2\n---\n",
			`skills/x/SKILL.md:6: malformed YAML: mapping key "k" already defined at line 5 (keep one of the two)`, 1},
		{"too many keys", "---\nname: a\ndescription: b\nmetadata:\n" + manyKeys(257) + "---\n",
			`skills/x/SKILL.md:5: a mapping of more than 256 keys (the frontmatter is metadata: keep data in the skill's files)`, 1},
		{"frontmatter over 64 KiB", "---\nname: a\ndescription: b\nx: |\n" + strings.Repeat("  long line\n", 6000) + "---\n",
			`skills/x/SKILL.md:1: the frontmatter is larger than 64 KiB (keep long text in the body, after the frontmatter)`, 1},
		{"not a mapping", "---\n- name: a\n---\n",
			`skills/x/SKILL.md:2: the frontmatter must be a mapping of fields, not a list (write one "key: value" per line)`, 1},
		{"a single value", "---\nhello\n---\n",
			`skills/x/SKILL.md:2: the frontmatter must be a mapping of fields, not a single value (write one "key: value" per line)`, 1},
		{"missing description", "---\nname: a\n---\n",
			`skills/x/SKILL.md: description: is required (add "description: ..." to the frontmatter)`, 1},
		{"name not text", "---\nname: [a]\ndescription: b\n---\n",
			`skills/x/SKILL.md:2: name: must be text, not a list (quote it: name: "...")`, 1},
		{"description a number", "---\nname: a\ndescription: 42\n---\n",
			`skills/x/SKILL.md:3: description: must be text, not a number (quote it: description: "...")`, 1},
		// A missing name is repaired (TestParseLenient); a missing description with no text to
		// stand for it is not.
		{"both missing", "---\nlicense: MIT\n---\n",
			`skills/x/SKILL.md: description: is required (add "description: ..." to the frontmatter)`, 1},
		{"empty description, no text", "---\nname: a\ndescription: \" \"\n---\n",
			`skills/x/SKILL.md:3: description: is empty (write the description after "description:")`, 1},
		{"bad optional fields", "---\nname: a\ndescription: b\nlicense: [x]\nmetadata: text\nallowed-tools: [Read, 3, \"\"]\n---\n",
			`skills/x/SKILL.md: 4 problems: line 4: license: must be text, not a list (quote it: license: "..."); ` +
				`line 5: metadata: must be a mapping, not text (write "key: value" lines indented under it); ` +
				`line 6: allowed-tools[1]: must be a tool name, not a number (write a tool name such as Read or Bash(git status:*)); ` +
				`line 6: allowed-tools[2]: is empty (remove the empty item)`, 4},
		{"allowed-tools a mapping", "---\nname: a\ndescription: b\nallowed-tools: {a: b}\n---\n",
			`skills/x/SKILL.md:4: allowed-tools: must be a list of tool names, not a mapping (write a list of tool names, or one line of names separated by spaces or commas)`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, parse := range []func(string, []byte) (*Doc, error){Parse, ParseMeta} {
				d, err := parse(path, []byte(tc.given))
				if err == nil {
					t.Fatalf("no error; got %#v", d)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("%v does not match ErrInvalid", err)
				}
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("%T is not an *Error", err)
				}
				if got := err.Error(); got != tc.want {
					t.Errorf("got  %s\nwant %s", got, tc.want)
				}
				if len(e.All()) != tc.count {
					t.Errorf("%d problems, want %d", len(e.All()), tc.count)
				}
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  k%d: %d\n", i, i)
	}
	return b.String()
}

// TestParseHostile: frontmatter that would make yaml.v3 work quadratically, or expand, is refused
// quickly, with a short message.
func TestParseHostile(t *testing.T) {
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\n"
	for i, prev := 0, "a"; i < 8; i++ {
		n := string(rune('b' + i))
		bomb += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n"
		prev = n
	}
	for name, front := range map[string]string{
		"13,000 duplicate keys":  strings.Repeat("x: 1\n", 13_000),
		"12,000 distinct keys":   manyKeys(12_000),
		"mappings of duplicates": "m:\n" + strings.Repeat("  - {"+strings.Repeat("x: 1, ", 250)+"}\n", 12),
		"alias expansion":        bomb,
		"deep nesting":           strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse(path, []byte("---\n"+front+"---\n"))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("accepted: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			t.Logf("%.200s", err)
			if len(err.Error()) > 1000 {
				t.Errorf("a message of %d bytes", len(err.Error()))
			}
		})
	}
}

func TestReadMeta(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := strings.Repeat("body line\n", 20_000) // 200 KB, past MetaLimit
	t.Run("reads the frontmatter of a large file", func(t *testing.T) {
		d, err := ReadMeta(write("big.md", "---\nname: a\ndescription: b\n---\n"+big))
		if err != nil || d.Name != "a" || d.Description != "b" || d.Body != "" {
			t.Fatalf("%#v %v", d, err)
		}
	})
	t.Run("frontmatter longer than MetaLimit", func(t *testing.T) {
		_, err := ReadMeta(write("long.md", "---\nname: a\ndescription: b\nx: |\n"+strings.Repeat("  long\n", 20_000)+"---\n"))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not closed within the first 64 KiB") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a delimiter cut at the limit does not count", func(t *testing.T) {
		pad := MetaLimit - len("---\nname: a\ndescription: b\nx: ") - len("\n---")
		_, err := ReadMeta(write("cut.md", "---\nname: a\ndescription: b\nx: "+strings.Repeat("y", pad)+"\n----more\n---\n"))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not closed within") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a file of exactly MetaLimit", func(t *testing.T) {
		head := "---\nname: a\ndescription: b\nx: "
		content := head + strings.Repeat("y", MetaLimit-len(head)-len("\n---")) + "\n---"
		if len(content) != MetaLimit {
			t.Fatal(len(content))
		}
		d, err := ReadMeta(write("exact.md", content))
		if err != nil || d.Name != "a" {
			t.Fatalf("%v %v", d, err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := ReadMeta(filepath.Join(dir, "nope.md"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a FIFO is refused without blocking", func(t *testing.T) {
		p := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip(err)
		}
		_, err := ReadMeta(p)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a directory is refused", func(t *testing.T) {
		_, err := ReadMeta(dir)
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("got %v", err)
		}
	})
}

// TestBundledSkills parses the bundled skills' SKILL.md files: they are the format's reference.
func TestBundledSkills(t *testing.T) {
	files, _ := filepath.Glob("../skills/*/SKILL.md")
	if len(files) == 0 {
		t.Skip("no bundled skills")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(f, data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if d.Name != filepath.Base(filepath.Dir(f)) || d.Body == "" {
			t.Errorf("%s: name %q, body %d bytes", f, d.Name, len(d.Body))
		}
	}
}
