package prompt

import (
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// guideSkill is an active instruction skill with the given frontmatter.
func guideSkill(id, name, desc string) *runtime.Skill {
	return mustSkill(runtime.SkillSpec{ID: id, Kind: spec.Instructions, Status: catalog.StatusActive,
		Instructions: &skillmd.Doc{Name: name, Description: desc}})
}

func TestSystemPrompt(t *testing.T) {
	broken := mustSkill(runtime.SkillSpec{ID: "broken", Kind: spec.Executable, Status: catalog.StatusError,
		Manifest: &spec.Manifest{ID: "broken", Name: "Broken", Description: "never listed"}})
	c := testCatalog{
		exe("word-count", "Word count", "Counts words."),
		guideSkill("letters", "letters", "How to write letters.\n\nUse it for any letter."),
		broken,
		exe("hello", "Hello", "Greets.\tSomeone\x1b[31m red"),
		guideSkill("same", "same", "same"),
	}
	got := System(c)
	wantCatalog := `# Skills

These skills are available. Only their descriptions are here: load a skill to read the rest.

Executable skills (programs you run):
- hello: Hello — Greets. Someone [31m red
- word-count: Word count — Counts words.

Instruction skills (guides you load and follow):
- letters: letters — How to write letters. Use it for any letter.
- same: same

## How to use skills
`
	if !strings.HasPrefix(got, wantCatalog) {
		t.Errorf("got\n%s\nwant it to start with\n%s", got, wantCatalog)
	}
	for _, want := range []string{"call load_skill with its id first", "skill_<id>", "run_skill", "read_skill_resource", `"error: "`} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt does not say %q", want)
		}
	}
	if strings.Contains(got, "never listed") {
		t.Error("a broken skill is listed")
	}
	// Deterministic: the catalog's order does not matter.
	rev := testCatalog{c[4], c[3], c[2], c[1], c[0]}
	if System(rev) != got {
		t.Error("the prompt depends on the testCatalog's order")
	}

	empty := System(testCatalog{})
	if !strings.HasPrefix(empty, "# Skills\n\nNo skills are available.\n\n## How to use skills") {
		t.Errorf("empty testCatalog:\n%s", empty)
	}
}

func TestSystemPromptRunModule(t *testing.T) {
	c := testCatalog{guideSkill("letters", "letters", "How to write letters."), exe("word-count", "Word count", "Counts words.")}
	got := RunModule(c)
	for _, want := range []string{
		"- word-count: Word count — Counts words.\n",
		"[RUN_MODULE]\n{\"name\": \"word-count\", \"args\": {...}}\n[/RUN_MODULE]",
		"[MODULE_RESULT]\n{\"name\": \"<name>\", \"success\": true, \"result\": ...}\n[/MODULE_RESULT]",
		"load_skill {\"name\": \"<id>\"",
		"read_skill_resource {\"skill\": \"<id>\", \"resource\": \"<path>\"}",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt does not contain %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "skill_word_count") || strings.Contains(got, "skill_<id>") {
		t.Error("the text protocol names skills by id, not by tool name")
	}
	if !strings.Contains(RunModule(testCatalog{}), `{"name": "<id>", "args": {...}}`) {
		t.Error("no example without executable skills")
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"", 10, ""},
		{"  a \n\n b\tc  ", 10, "a b c"},
		{"abcdef", 3, "abc…"},
		{"abc", 3, "abc"},
		{"é\u0000è", 10, "é è"},
		{"\n\n", 10, ""},
		{" a", 10, "a"},
		{"a ", 10, "a"},
		{"a  b", 10, "a b"},
		{"a b", 10, "a b"},
		{"a\x7fb", 10, "a b"},
	}
	for _, tc := range tests {
		if got := oneLine(tc.in, tc.max); got != tc.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	long := strings.Repeat("x", 5000)
	if p := System(testCatalog{exe("a", "A", long)}); strings.Count(p, "x") > maxPromptDescription+10 {
		t.Error("a long description is not cut")
	}
}
