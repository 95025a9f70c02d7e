package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// A description skillbox new wrote and nobody replaced is a warning naming the file and the
// field; the skill still runs.
func TestPlaceholdersAreWarnings(t *testing.T) {
	dir := t.TempDir()
	sd := fixture(t, dir, "greet", `{"id":"greet","name":"Greet","description":"`+spec.PlaceholderDescription+`",
		"parameters":{"name":{"type":"string","description":"`+spec.PlaceholderParamDescription+`"},"other":{"type":"string","description":"Fine"}}}`, "echo")
	must(t, os.WriteFile(filepath.Join(sd, "SKILL.md"), []byte("---\nname: greet\ndescription: "+spec.PlaceholderInstructionsDescription+"\n---\nBody\n"), 0o644))
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	s, err := rt.Skill("greet")
	if err != nil {
		t.Fatal(err)
	}
	hint := " (replace it: a model reads it to choose the skill and fill in its arguments)"
	want := []string{
		"greet/SKILL.md: description: is the placeholder skillbox new wrote" + hint,
		"greet/skill.json: description: is the placeholder skillbox new wrote" + hint,
		"greet/skill.json: parameters.name.description: is the placeholder skillbox new wrote" + hint,
	}
	if got := s.Warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
	if res, err := rt.Run(context.Background(), run.Request{Skill: "greet", Args: []byte(`{"name":"Ada"}`), Who: testAdmin}); err != nil || !res.Success {
		t.Errorf("a skill with placeholders left in does not run: %v", err)
	}
}
