package registry

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
)

// instructions writes an instruction skill (a SKILL.md only) in dir/name.
func instructions(t *testing.T, dir, name string) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "---\ndescription: Says what " + name + " does.\n---\nBody\n"
	if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ids(s *Set) []string {
	var out []string
	for _, k := range s.Order {
		out = append(out, k.ID()+"@"+filepath.Base(filepath.Dir(k.Dir())))
	}
	return out
}

// A scan lists every package of every directory once, by id; the first directory wins a clash,
// and a directory that is not a package (no SKILL.md, no manifest) or is hidden is skipped.
func TestScan(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	instructions(t, a, "notes")
	instructions(t, a, "zeta")
	instructions(t, b, "notes")
	instructions(t, b, "alpha")
	instructions(t, b, ".hidden")
	if err := os.MkdirAll(filepath.Join(b, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Scan([]string{a, b, filepath.Join(t.TempDir(), "missing")}, &policy.Policy{}, nil, slog.New(slog.DiscardHandler))
	if got, want := ids(s), []string{"alpha@b", "notes@a", "zeta@a"}; !slices.Equal(got, want) {
		t.Errorf("scan: %v, want %v", got, want)
	}
	for id, k := range s.ByID {
		if k.Status() != catalog.StatusActive {
			t.Errorf("%s: status %s (%v)", id, k.Status(), k.Err())
		}
	}
}

// Two directories whose names make the same id: the one named by the id keeps it, the other is
// listed broken under its directory's name, naming the skill that has the id.
func TestResolveIDs(t *testing.T) {
	dir := t.TempDir()
	instructions(t, dir, "My_Notes")
	instructions(t, dir, "my-notes")
	s := Scan([]string{dir}, &policy.Policy{}, nil, slog.New(slog.DiscardHandler))
	if got, want := ids(s), []string{"My_Notes@" + filepath.Base(dir), "my-notes@" + filepath.Base(dir)}; !slices.Equal(got, want) {
		t.Fatalf("scan: %v, want %v", got, want)
	}
	kept, broken := s.ByID["my-notes"], s.ByID["My_Notes"]
	if kept.Dir() != filepath.Join(dir, "my-notes") || kept.Status() != catalog.StatusActive {
		t.Errorf("the directory named by the id: %s, %s", kept.Dir(), kept.Status())
	}
	if broken.Status() != catalog.StatusError || !strings.Contains(broken.Err().Error(), `is already the id of the skill in "my-notes"`) {
		t.Errorf("the other: %s, %v", broken.Status(), broken.Err())
	}
}

// A user's own skills lie over the tenant's: a user's skill shadows the tenant's of its id for
// that user, and the tenant's others are the tenant's own values.
func TestOverlay(t *testing.T) {
	tenant, user := t.TempDir(), t.TempDir()
	for _, n := range []string{"alpha", "notes", "zeta"} {
		instructions(t, tenant, n)
	}
	instructions(t, user, "notes")
	instructions(t, user, "mine")
	p, logger := &policy.Policy{}, slog.New(slog.DiscardHandler)
	base, own := Scan([]string{tenant}, p, nil, logger), Scan([]string{user}, p, nil, logger)
	o := Overlay(own, base)
	tn, un := filepath.Base(tenant), filepath.Base(user)
	if got, want := ids(o), []string{"alpha@" + tn, "mine@" + un, "notes@" + un, "zeta@" + tn}; !slices.Equal(got, want) {
		t.Errorf("overlay: %v, want %v", got, want)
	}
	if o.ByID["alpha"] != base.ByID["alpha"] {
		t.Error("the tenant's skill is not the tenant's own value")
	}
	if Overlay(own, nil) != own {
		t.Error("an overlay over nothing is not its own set")
	}
}
