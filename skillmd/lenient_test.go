package skillmd

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParseLenient reads the published SKILL.md files that Claude Code loads and a strict reader
// refuses, one testdata folder each: each loads, with a warning that names the field (or the
// file) and cites the rule it breaks, and Parse, ParseMeta and ReadMeta agree.
func TestParseLenient(t *testing.T) {
	tests := []struct {
		dir      string
		want     Doc      // Body and Warnings not compared
		warnings []string // "field: substring" of each warning, in order
	}{
		{"colon-description",
			Doc{Name: "summarize", Description: "Summarizes long documents. Use this when: the user asks for a summary", License: "MIT"},
			[]string{`description@3: holds an unquoted ": "`}},
		{"colon-continuation",
			Doc{Name: "nextjs", Description: "Next.js 16 with App Router and caching.\nKeywords: Next.js 16, App Router, use cache", License: "MIT",
				AllowedTools: []string{"Read", "Grep"}},
			[]string{`description@3: holds an unquoted ": "`}},
		{"no-frontmatter",
			Doc{Description: "Extracts text and tables from PDF files. Use it when the user gives you a PDF."},
			[]string{"@1: has no frontmatter, so the skill is named after its directory and described by the first paragraph of its text (Agent Skills rule: " + string(RuleFrontmatter) + ")"}},
		{"missing-name",
			Doc{Description: "Reviews pull requests for style."},
			[]string{"name: is missing, so the skill is named after its directory (Agent Skills rule: name is required)"}},
		{"missing-description",
			Doc{Name: "deploy-notes", Description: "Writes release notes for a deploy, from the merged pull requests."},
			[]string{"description: is missing, so the first paragraph of the text is used (Agent Skills rule: description is required)"}},
		{"blank-lines-first",
			Doc{Name: "late-start", Description: "Frontmatter after blank lines."},
			[]string{"@1: starts with 2 blank lines before the frontmatter"}},
		{"argument-hint-words",
			Doc{Name: "fix-issue", Description: "Fixes a GitHub issue and switches to its branch.", ArgumentHint: "[issue] [branch]"},
			[]string{`argument-hint@4: is bracketed words, which YAML reads as a list`}},
		{"argument-hint-list",
			Doc{Name: "fix-one", Description: "Fixes one GitHub issue.", ArgumentHint: "[issue-number]"}, nil},
		{"disable-model-invocation",
			Doc{Name: "deploy", Description: "Deploys the application to production.", DisableModelInvocation: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			file := filepath.Join("testdata", tc.dir, "SKILL.md")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			read, err := ReadMeta(file)
			if err != nil {
				t.Fatalf("ReadMeta: %v", err)
			}
			for name, parse := range map[string]func(string, []byte) (*Doc, error){"Parse": Parse, "ParseMeta": ParseMeta, "ReadMeta": nil} {
				d := read
				if parse != nil {
					if d, err = parse(file, data); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				got := *d
				got.Body, got.Warnings = "", nil
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s: got  %#v\nwant %#v", name, got, tc.want)
				}
				if len(d.Warnings) != len(tc.warnings) {
					t.Fatalf("%s: warnings %v, want %v", name, d.Warnings, tc.warnings)
				}
				for i, w := range d.Warnings {
					field, rest, _ := strings.Cut(tc.warnings[i], ":")
					field, line, _ := strings.Cut(field, "@")
					if w.Field != field || (line != "" && w.Line != atoi(line)) || !strings.HasPrefix(w.Msg, strings.TrimSpace(rest)) || w.Hint == "" || w.Path != file {
						t.Errorf("%s: warning %d: %+v, want %s", name, i, w, tc.warnings[i])
					}
				}
			}
		})
	}
}

// TestParseRefusesWhatCannotBeASkill: the leniency stops at what no reader can use.
func TestParseRefusesWhatCannotBeASkill(t *testing.T) {
	tests := []struct{ dir, want string }{
		{"binary-nul", "SKILL.md:5: is not text: it holds a NUL byte"},
		{"not-utf8", "SKILL.md:3: is not text: it is not valid UTF-8"},
		{"no-description-no-text", `SKILL.md: description: is required (add "description: ..." to the frontmatter)`},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			file := filepath.Join("testdata", tc.dir, "SKILL.md")
			data, _ := os.ReadFile(file)
			_, perr := Parse(file, data)
			_, rerr := ReadMeta(file)
			for _, err := range []error{perr, rerr} {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got %v, want ...%s", err, tc.want)
				}
			}
		})
	}
	t.Run("no frontmatter and no text", func(t *testing.T) {
		_, err := Parse(path, []byte("```\ncode\n```\n"))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "has no frontmatter, and no paragraph of text") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a repair that does not mend the YAML keeps its error", func(t *testing.T) {
		_, err := Parse(path, []byte("---\nname: a\ndescription: Does X: Y\nmetadata: {a: [\n---\n"))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "malformed YAML: mapping values are not allowed") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a value that is not plain is not repaired", func(t *testing.T) {
		_, err := Parse(path, []byte("---\nname: a\ndescription: \"quoted\": then more\n---\n"))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a key indented with a tab is not a continuation", func(t *testing.T) {
		_, err := Parse(path, []byte("---\nname: a: b\n\tdescription: c\n---\n"))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("got %v", err)
		}
	})
}

// TestRepairKeepsLinesAndOtherKeys: a repair rewrites the keys it must, keeps every line where it
// was (so later problems are reported at their line), and leaves nested keys alone.
func TestRepairKeepsLinesAndOtherKeys(t *testing.T) {
	front := "name: a\ndescription: one: two\n  three\nmetadata:\n  k: v\nlicense: [x]\n"
	_, err := Parse(path, []byte("---\n"+front+"---\n"))
	var e *Error
	if !errors.As(err, &e) || e.Line != 7 || e.Field != "license" {
		t.Fatalf("want the license problem at line 7, got %v", err)
	}
	d, err := Parse(path, []byte("---\nname: a\ndescription: one: two\n  three\nmetadata:\n  k: v: w\n---\n"))
	if err == nil {
		t.Fatalf("a nested value was repaired: %#v", d)
	}
}

// TestCheck: the Agent Skills format's rules on values, each cited.
func TestCheck(t *testing.T) {
	file := filepath.Join("testdata", "spec-violations", "SKILL.md")
	d, err := ReadMeta(file)
	if err != nil {
		t.Fatal(err)
	}
	got := Check(file, d)
	want := []string{
		`name: "PDF_Tools" breaks the Agent Skills rule: ` + string(RuleName) + ` (write it as "pdf-tools")`,
		"description: is 1199 characters; it breaks the Agent Skills rule: description must be 1-1,024 characters",
		"compatibility: is 501 characters; it breaks the Agent Skills rule: compatibility must be at most 500 characters",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, w := range want {
		if !strings.Contains(got[i].Error(), w) {
			t.Errorf("got  %s\nwant %s", got[i], w)
		}
	}
	if c := Check(file, &Doc{Name: "pdf-tools", Description: "d"}); c != nil {
		t.Errorf("a sound doc: %v", c)
	}
	for name, ok := range map[string]bool{"a": true, "pdf-tools": true, "a1-b2": true, strings.Repeat("a", 64): true,
		strings.Repeat("a", 65): false, "-a": false, "a-": false, "a--b": false, "A": false, "a_b": false, "": false, "é": false} {
		if ValidName(name) != ok {
			t.Errorf("ValidName(%q) = %v", name, !ok)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"My_Skill": "my-skill", "my.skill": "my-skill", "PDF Tools (v2)": "pdf-tools-v2", "__x__": "x",
		"café-menu": "caf-menu", "日本語": "", "a" + strings.Repeat("b", 70): "a" + strings.Repeat("b", 62),
		strings.Repeat("a", 62) + "_b": strings.Repeat("a", 62),
	} {
		if got := Slug(in, 63); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFirstParagraph: what describes a skill without a description.
func TestFirstParagraph(t *testing.T) {
	for in, want := range map[string]string{
		"# T\n\nOne\ntwo\n\nthree":          "One two",
		"<!-- x\n y -->\nText":              "Text",
		"---\n\nAfter a break":              "After a break",
		"~~~\nfenced\n~~~\nOut":             "Out",
		"# Only a heading #":                "Only a heading",
		"Para\n# Heading ends it":           "Para",
		"":                                  "",
		"  spaced \t  words  ":              "spaced words",
		strings.Repeat("word ", 300) + "\n": strings.Repeat("word ", 300)[:MaxDescription-1] + "…",
	} {
		if got := firstParagraph([]byte(in), MaxDescription); got != want {
			t.Errorf("firstParagraph(%q) = %q, want %q", in, got, want)
		}
	}
}
