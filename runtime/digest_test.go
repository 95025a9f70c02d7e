package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// The runtime's digest of a skill is its tree's (bundle TestDigestCoversThePackage): the file
// digests it remembers see each change, and a skill and its runs carry the digest.
func TestSkillAndRunDigestAreTheTrees(t *testing.T) {
	dir := t.TempDir()
	sd := fixture(t, dir, "dig", simple("dig", ""), "hello")
	dg := registry.NewDigester()
	digest := func() string {
		d, err := dg.TreeDigest(sd)
		if err != nil {
			t.Fatal(err)
		}
		if tree, err := bundle.Walk(sd, nil, false); err != nil || tree.Digest != d {
			t.Errorf("remembered digest %s, the tree's %s (%v)", d, tree.Digest, err)
		}
		return d
	}
	base := digest()
	for _, change := range []struct{ name, data string }{
		{"skill.json", simple("dig", `"permissions":{"env":["X"]}`)},
		{"resources/r.md", "r"},
		{"SKILL.md", "---\nname: dig\ndescription: d\n---\n"},
	} {
		p := filepath.Join(sd, change.name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(change.data), 0o644))
		d := digest()
		if d == base {
			t.Errorf("changing %s kept the digest", change.name)
		}
		base = d
	}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	s, _ := rt.Skill("dig")
	res, err := rt.Run(context.Background(), run.Request{Skill: "dig", Who: testAdmin})
	if err != nil || s.Digest() != base || res.Digest != base {
		t.Errorf("skill digest %s, run digest %s (%v); want %s", s.Digest(), res.Digest, err, base)
	}
}

// A tree over the digest's bounds (bundle TestDigestBounds) is a broken skill that says why.
func TestSkillOverTheDigestBoundsIsBroken(t *testing.T) {
	dir := t.TempDir()
	sd := fixture(t, dir, "many", simple("many", ""), "hello")
	for i := range bundle.MaxTreeFiles {
		p := filepath.Join(sd, "resources", "f"+strconv.Itoa(i))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o644))
	}
	s, _ := LoadSkill(sd, &policy.Policy{})
	if s.Status() != catalog.StatusError || !strings.Contains(s.Err().Error(), "more than 4096 files outside src/") {
		t.Errorf("%v %v", s.Status(), s.Err())
	}
}
