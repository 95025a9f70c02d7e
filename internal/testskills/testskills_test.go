package testskills

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestListings lays out every kind of entry and checks each listing whole: only directories
// count, in name order, by any of the files asked for.
func TestListings(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"b-run/skill.yaml", "b-run/SKILL.md", // both
		"a-run/skill.json", "c-run/skill.yml", // a manifest only
		"guide/SKILL.md",         // instructions only
		"notes/README.md",        // neither: not a skill
		"skill.json", "SKILL.md", // files of dir itself, not skills
	} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		list func(string) ([]string, error)
		want []string
	}{
		{"Skills", Skills, []string{"a-run", "b-run", "c-run", "guide"}},
		{"Executable", Executable, []string{"a-run", "b-run", "c-run"}},
		{"WithSkillMD", WithSkillMD, []string{"b-run", "guide"}},
		{"Tools", Tools, []string{"skill_a_run", "skill_b_run", "skill_c_run"}},
		{"IDs README.md", func(d string) ([]string, error) { return IDs(d, "README.md") }, []string{"notes"}},
		{"IDs nothing", func(d string) ([]string, error) { return IDs(d) }, nil},
	} {
		got, err := c.list(dir)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := Skills(filepath.Join(dir, "missing")); err == nil {
		t.Error("Skills of a missing directory: no error")
	}
}
