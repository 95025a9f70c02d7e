package tooldef_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
)

func TestToolName(t *testing.T) {
	openai := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	anthropic := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	tests := []struct{ id, want string }{
		{"hello", "skill_hello"},
		{"word-count", "skill_word_count"},
		{"a-b-c-1", "skill_a_b_c_1"},
		{"0", "skill_0"},
		{"x-", "skill_x_"}, // ids may end in or repeat a dash: still one to one
		{"a--b", "skill_a__b"},
		{strings.Repeat("x", 58), "skill_" + strings.Repeat("x", 58)},
	}
	for _, tc := range tests {
		got := tooldef.Name(tc.id)
		if got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.id, got, tc.want)
		}
		if !openai.MatchString(got) || !anthropic.MatchString(got) {
			t.Errorf("%q is not a valid tool name", got)
		}
		if id, ok := tooldef.SkillID(got); !ok || id != tc.id {
			t.Errorf("SkillID(%q) = %q, %v", got, id, ok)
		}
	}
	// The longest id makes a name OpenAI refuses; Anthropic's limit holds for every id.
	long := tooldef.Name(strings.Repeat("x", 63))
	if openai.MatchString(long) || !anthropic.MatchString(long) {
		t.Errorf("%d characters", len(long))
	}
}

func TestSkillIDRefuses(t *testing.T) {
	for _, tool := range []string{
		"", "skill_", "hello", "skill:hello", "Skill_hello", "skill_Hello", "skill_word-count",
		"skill__x", "skill__", "skill_a.b", "skill_" + strings.Repeat("x", 64), "skill_é",
	} {
		if id, ok := tooldef.SkillID(tool); ok {
			t.Errorf("SkillID(%q) = %q, true", tool, id)
		}
	}
}

func ExampleName() {
	name := tooldef.Name("word-count")
	id, ok := tooldef.SkillID(name)
	fmt.Println(name, id, ok)
	// Output: skill_word_count word-count true
}
