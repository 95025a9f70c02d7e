package runtime

import (
	"path/filepath"
	"strings"
	"testing"
)

// A JSON syntax error is placed (spec TestJSONSyntaxErrorIsPlaced) in the files the runtime reads
// too: scripts/skillbox.json, and a manifest loaded from a skills directory, where the problem
// names the file as the skill's and the operator's error names it on the host.
func TestJSONSyntaxErrorIsPlacedInTheRuntime(t *testing.T) {
	manifest := "{\n  \"id\": \"x\",\n  \"name\": \"X\",\n  \"description\": \"d\",\n  \"parameters\": {\n    \"a\": {\"type\": \"string\"}\n  \"version\": \"1\"\n}\n"
	_, err := ParseScriptsRequest("skills/x/scripts/skillbox.json", []byte("{\"permissions\": {\"env\": [\"A\",]}}"))
	if want := `skill "" is invalid: skills/x/scripts/skillbox.json:1:30: invalid character ']' looking for beginning of value (remove the comma before it: JSON allows none after the last item)`; err == nil || err.Error() != want {
		t.Errorf("scripts/skillbox.json:\n got %v\nwant %s", err, want)
	}

	// Loaded from a skills directory, the problem names the file as the skill's, and keeps its place.
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
