package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// A skill that cannot run says which of the three it is, with the id asked for; a missing one
// names the directories searched (to the operator) and the nearest ids (to everyone); a broken
// one says why, in full. The kind stays not_found and the sentinels keep matching.
func TestNotFoundTellsWhy(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "more")
	fixture(t, dir, "word-count", simple("word-count", ""), "echo")
	fixture(t, dir, "word-counter", simple("word-counter", ""), "echo")
	fixture(t, dir, "broken", `{"id":"broken","name":"b","description":"d","colour":1}`, "echo")
	must(t, os.MkdirAll(filepath.Join(dir, "guide"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "guide", "SKILL.md"), []byte("---\nname: guide\ndescription: Explains\n---\nBody\n"), 0o644))

	for _, scanned := range []bool{false, true} { // before the first scan, lookups load one directory alone
		rt := newRuntime(t, Config{SkillDirs: []string{dir, other}})
		if scanned {
			rt.Skills()
		}
		runOne := func(id string) (*run.Error, *NotFoundError) {
			t.Helper()
			_, err := rt.Run(context.Background(), run.Request{Skill: id, Who: testAdmin})
			var re *run.Error
			var nf *NotFoundError
			if !errors.As(err, &re) || !errors.As(err, &nf) || !errors.Is(err, run.ErrNotFound) || re.Kind != run.KindNotFound || nf.ID != id {
				t.Fatalf("scanned=%v run %s: %v, want a not_found RunError around a NotFoundError", scanned, id, err)
			}
			return re, nf
		}

		re, nf := runOne("wrod-count")
		if nf.Absent != Missing || !slices.Equal(nf.Nearest, []string{"word-count"}) || !slices.Equal(nf.Dirs, []string{dir, other}) {
			t.Errorf("scanned=%v missing: %+v", scanned, nf)
		}
		if want := `no skill "wrod-count" in ` + dir + ", " + other + "; did you mean word-count?"; nf.Error() != want {
			t.Errorf("scanned=%v operator's message:\n got %s\nwant %s", scanned, nf.Error(), want)
		}
		if want := `no skill "wrod-count"; did you mean word-count?`; re.Message != want || strings.Contains(re.Error(), dir) {
			t.Errorf("scanned=%v client's message %q (error %q), want %q and no directory", scanned, re.Message, re.Error(), want)
		}
		if errors.Is(re, run.ErrBroken) || errors.Is(re, run.ErrNotExecutable) {
			t.Errorf("scanned=%v a missing skill matches ErrBroken or ErrNotExecutable", scanned)
		}
		if _, nf := runOne("word"); !slices.Equal(nf.Nearest, []string{"word-count", "word-counter"}) {
			t.Errorf("scanned=%v prefix: nearest %v", scanned, nf.Nearest)
		}
		if _, nf := runOne("zebra"); len(nf.Nearest) != 0 || strings.Contains(nf.Error(), "did you mean") {
			t.Errorf("scanned=%v nothing near: %v", scanned, nf.Error())
		}

		re, nf = runOne("guide")
		if nf.Absent != InstructionsOnly || !errors.Is(re, run.ErrNotExecutable) || errors.Is(re, run.ErrBroken) ||
			re.Message != `skill "guide" has instructions only (a SKILL.md, no code): it is read, not run; read it with skillbox instructions guide, or a model with load_skill` {
			t.Errorf("scanned=%v instructions only: %+v %q", scanned, nf, re.Message)
		}

		re, nf = runOne("broken")
		var se *spec.SkillError
		if nf.Absent != Broken || !errors.Is(re, run.ErrBroken) || !errors.As(re, &se) {
			t.Errorf("scanned=%v broken: %+v", scanned, nf)
		}
		wantOp := `skill "broken" is broken: ` + filepath.Join(dir, "broken", "skill.json") + `: colour: unknown field (allowed fields:`
		if !strings.HasPrefix(nf.Error(), wantOp) {
			t.Errorf("scanned=%v broken, operator's:\n got %s\nwant %s...", scanned, nf.Error(), wantOp)
		}
		if wantCl := `skill "broken" is broken: broken/skill.json: colour: unknown field (allowed fields:`; !strings.HasPrefix(re.Message, wantCl) || strings.Contains(re.Message, dir) {
			t.Errorf("scanned=%v broken, client's:\n got %s\nwant %s...", scanned, re.Message, wantCl)
		}

		// Skill(id), the lookup behind every face's skill pages, says the same of a missing one.
		_, err := rt.Skill("wrod-count")
		if !errors.As(err, &nf) || !errors.Is(err, run.ErrNotFound) || !slices.Equal(nf.Nearest, []string{"word-count"}) || strings.Contains(err.Error(), dir) {
			t.Errorf("scanned=%v Skill: %v", scanned, err)
		}
	}
}

func TestNearestIDs(t *testing.T) {
	ids := []string{"alpha", "word-count", "word-counter", "word-cont", "wordy", "pdf", "notes"}
	for _, tc := range []struct {
		id   string
		want []string
	}{
		{"word-count", []string{"word-cont", "word-counter"}}, // itself is not suggested
		{"Word-Count", []string{"word-count", "word-cont", "word-counter"}},
		{"pfd", []string{"pdf"}},
		{"wor", []string{"word-cont", "word-count", "word-counter"}}, // prefixes, three at most
		{"nope", nil}, // two edits from "notes": too far for four letters
		{"", nil},
		{strings.Repeat("a", 200), nil}, // longer than any id: not compared
	} {
		if got := nearestIDs(tc.id, ids); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("nearestIDs(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
