package spec_test

import (
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

// A JSON syntax error in a file of a package names the file, the line and the column, and the
// offending character, whichever file it is: here the manifest (runtime
// TestJSONSyntaxErrorIsPlacedInTheRuntime: scripts/skillbox.json, and a skill loaded from a
// directory).
func TestJSONSyntaxErrorIsPlaced(t *testing.T) {
	manifest := "{\n  \"id\": \"x\",\n  \"name\": \"X\",\n  \"description\": \"d\",\n  \"parameters\": {\n    \"a\": {\"type\": \"string\"}\n  \"version\": \"1\"\n}\n"
	_, err := spec.ParseManifest("skills/x/skill.json", []byte(manifest))
	if want := `skill "" is invalid: skills/x/skill.json:7:3: invalid character '"' after object key:value pair (a comma is missing before it)`; err == nil || err.Error() != want {
		t.Errorf("skill.json:\n got %v\nwant %s", err, want)
	}
}
