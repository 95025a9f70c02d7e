package spec_test

import (
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

// A JSON syntax error in a file of a package names the file, the line and the column, and the
// offending character, whichever file it is: here the manifest
// (TestScriptsRequestSyntaxErrorIsPlaced: scripts/skillbox.json; runtime
// TestJSONSyntaxErrorIsPlacedInTheRuntime: a skill loaded from a directory).
func TestJSONSyntaxErrorIsPlaced(t *testing.T) {
	manifest := "{\n  \"id\": \"x\",\n  \"name\": \"X\",\n  \"description\": \"d\",\n  \"parameters\": {\n    \"a\": {\"type\": \"string\"}\n  \"version\": \"1\"\n}\n"
	_, err := spec.ParseManifest("skills/x/skill.json", []byte(manifest))
	if want := `skill "" is invalid: skills/x/skill.json:7:3: invalid character '"' after object key:value pair (a comma is missing before it)`; err == nil || err.Error() != want {
		t.Errorf("skill.json:\n got %v\nwant %s", err, want)
	}
}

// scripts/skillbox.json's syntax errors are placed as a manifest's are.
func TestScriptsRequestSyntaxErrorIsPlaced(t *testing.T) {
	_, err := spec.ParseScriptsRequest("skills/x/scripts/skillbox.json", []byte("{\"permissions\": {\"env\": [\"A\",]}}"))
	if want := `skill "" is invalid: skills/x/scripts/skillbox.json:1:30: invalid character ']' looking for beginning of value (remove the comma before it: JSON allows none after the last item)`; err == nil || err.Error() != want {
		t.Errorf("scripts/skillbox.json:\n got %v\nwant %s", err, want)
	}
}

// A program is a Python, JavaScript or TypeScript file under scripts/, whatever the case of its
// extension; nothing else is.
func TestProgramLanguage(t *testing.T) {
	for name, want := range map[string]spec.Language{
		"scripts/report.py": spec.LangPython, "scripts/a/b.MJS": spec.LangJavaScript, "scripts/x.cjs": spec.LangJavaScript,
		"scripts/t.mts": spec.LangTypeScript, "scripts/t.ts": spec.LangTypeScript,
		"report.py": "", "scripts/run.sh": "", "scripts/x.rb": "", "lib/scripts/x.py": "", "scripts": "",
	} {
		got, ok := spec.ProgramLanguage(name)
		if got != want || ok != (want != "") {
			t.Errorf("ProgramLanguage(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
