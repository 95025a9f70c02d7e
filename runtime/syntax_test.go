package runtime

import (
	"path/filepath"
	"strings"
	"testing"
)

// A JSON syntax error is placed (spec TestJSONSyntaxErrorIsPlaced) in a manifest loaded from a
// skills directory too, where the problem names the file as the skill's and the operator's error
// names it on the host.
func TestJSONSyntaxErrorIsPlacedInTheRuntime(t *testing.T) {
	manifest := "{\n  \"id\": \"x\",\n  \"name\": \"X\",\n  \"description\": \"d\",\n  \"parameters\": {\n    \"a\": {\"type\": \"string\"}\n  \"version\": \"1\"\n}\n"
	dir := t.TempDir()
	fixture(t, dir, "x", manifest, "echo")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	s, err := rt.Skill("x")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(s.Problems(), "; "), `x/skill.json:7:3: invalid character '"' after object key:value pair (a comma is missing before it)`; got != want {
		t.Errorf("loaded:\n got %s\nwant %s", got, want)
	}
	if got := s.Err().Error(); !strings.Contains(got, filepath.Join(dir, "x", "skill.json")+":7:3: ") {
		t.Errorf("the operator's error %q does not place the problem in the file", got)
	}
}
