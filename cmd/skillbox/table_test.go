package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// list shows why a broken skill is broken in full: on one line when stdout is no terminal (as
// here, in-process), and with --json; only a healthy skill's description is cut to a line.
func TestListShowsTheWholeReason(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skillFixture(t, dir, "broken", manifest("broken", `"colour":"red","tags":"x"`), "hello")
	skillFixture(t, dir, "wordy", manifest("wordy", ""), "hello")
	reason := `broken/skill.json: colour: unknown field (allowed fields: id, name, description, version, parameters, result, tags, createdBy, entrypoint, runtime, permissions, limits); ` +
		`broken/skill.json: tags: must be a list of strings, not a string (write it as a list: ["a", "b"])`
	r := cli(t, "", "--skills", dir, "list")
	if r.code != exitOK || !strings.Contains(r.stdout, "\nbroken  executable  error               "+reason+"\n") {
		t.Errorf("list does not show the whole reason %q:\n%s", reason, r)
	}
	r = cli(t, "", "--skills", dir, "list", "--json")
	if r.code != exitOK || at(t, decode[[]any](t, r.stdout), 0, "error") != reason {
		t.Errorf("list --json:\n%s", r)
	}
}

// On a terminal the reason is wrapped in its column, every word kept.
func TestSkillTableWraps(t *testing.T) {
	rows := []skillSummary{
		{Summary: runtime.Summary{ID: "broken", Kind: spec.Executable, Status: catalog.StatusError,
			Error: "broken/skill.json: colour: unknown field (did you mean \"color\"?); broken/execute.wasm: missing: an executable skill needs its compiled module"}, Dir: filepath.Join("x", "broken")},
		{Summary: runtime.Summary{ID: "ok", Kind: spec.Executable, Status: catalog.StatusActive, Version: "1.0.0", Description: strings.Repeat("word ", 30)}},
	}
	var b bytes.Buffer
	writeSkillTable(&b, rows, 80)
	want := `ID      KIND        STATUS  VERSION  DESCRIPTION
broken  executable  error            broken/skill.json: colour: unknown field
                                     (did you mean "color"?);
                                     broken/execute.wasm: missing: an executable
                                     skill needs its compiled module
ok      executable  active  1.0.0    word word word word word word word word word word word word word word w…
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := wrap(strings.Repeat("a", 30)+" b", 24); strings.Join(got, "|") != strings.Repeat("a", 24)+"|aaaaaa b" {
		t.Errorf("a word longer than the line: %q", got)
	}
}
