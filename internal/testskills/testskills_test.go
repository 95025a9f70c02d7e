package testskills

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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
		{"Instructions", Instructions, []string{"guide"}},
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

// fatalTB records a Fatal and ends its goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	failed string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.failed = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fatalTB) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }

// TestMust fails on an error and on an empty list, naming the directory, and passes a list on.
func TestMust(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "guide"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "guide", "SKILL.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(dir string, list func(string) ([]string, error)) (got []string, failed string) {
		f := &fatalTB{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			got = Must(f, dir, list)
		}()
		<-done
		return got, f.failed
	}
	if got, failed := must(dir, WithSkillMD); failed != "" || !slices.Equal(got, []string{"guide"}) {
		t.Errorf("Must(WithSkillMD) = %q, failed %q; want [guide]", got, failed)
	}
	if _, failed := must(dir, Executable); !strings.Contains(failed, dir) {
		t.Errorf("Must of an empty list failed with %q, want it to name %s", failed, dir)
	}
	missing := filepath.Join(dir, "missing")
	if _, failed := must(missing, Skills); !strings.Contains(failed, missing) {
		t.Errorf("Must of a missing dir failed with %q, want it to name %s", failed, missing)
	}
}
