package script

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// A Python run's mounts: a read-only directory that does not exist is left out, a writable one is
// made, the skill's own directory is the interpreter's to mount, and the private /tmp is not made
// until the guest writes to it (TestPythonTmpIsMadeOnlyWhenWritten runs one that does).
func TestPythonMounts(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the private /tmp is made here, where no other test makes one
	root := t.TempDir()
	out, missing, data := filepath.Join(root, "out"), filepath.Join(root, "missing"), filepath.Join(root, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &hostfuncs.Grant{Mounts: []hostfuncs.Mount{
		{Path: policy.SkillMount, Dir: root},
		{Path: "/data", Dir: data},
		{Path: "/missing", Dir: missing},
		{Path: "/out", Dir: out, Writable: true},
	}}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "skillbox-tmp-*"))
	hook, cleanup, err := pythonMounts(g, spec.DefaultLimits, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hook == nil {
		t.Fatal("no mount hook")
	}
	if st, err := os.Stat(out); err != nil || !st.IsDir() {
		t.Errorf("the writable mount's directory was not made: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a read-only mount's missing directory was made")
	}
	during, _ := filepath.Glob(filepath.Join(os.TempDir(), "skillbox-tmp-*"))
	if len(during) != len(before) {
		t.Errorf("private /tmp directories: %d before, %d during; want none made before the guest writes", len(before), len(during))
	}
	cleanup()
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "skillbox-tmp-*"))
	if len(after) != len(before) {
		t.Errorf("cleanup left %d private /tmp directories, want %d", len(after), len(before))
	}
}

// A program starts in the first directory its grant lets it write, not the skill's own, else in
// its private /tmp.
func TestProgramCwd(t *testing.T) {
	for _, c := range []struct {
		mounts []hostfuncs.Mount
		want   string
	}{
		{nil, "/tmp"},
		{[]hostfuncs.Mount{{Path: policy.SkillMount, Writable: true}}, "/tmp"},
		{[]hostfuncs.Mount{{Path: "/data"}, {Path: "/work", Writable: true}, {Path: "/more", Writable: true}}, "/work"},
	} {
		if got := cwdOf(c.mounts); got != c.want {
			t.Errorf("mounts %+v: cwd %q, want %q", c.mounts, got, c.want)
		}
	}
}
