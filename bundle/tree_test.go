package bundle_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
)

// The version digest is the one docs and tree.go describe: sha256sum of the sorted list of
// "<file sha256>  <path>" lines, over every regular file but hidden ones and src/.
func TestDigestIsTheDocumentedOne(t *testing.T) {
	for _, tool := range []string{"bash", "find", "sort", "sha256sum", "cut", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	dir := t.TempDir()
	sd := fixture(t, dir, "dig", simple("dig", ""), "hello")
	for name, data := range map[string]string{"SKILL.md": "---\nname: dig\ndescription: d\n---\nbody\n",
		"resources/b.md": "b", "resources/a b.md": "a", "resources/deep/c.txt": "c"} {
		p := filepath.Join(sd, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	tree, err := bundle.Walk(sd, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	d := tree.Digest
	script := `cd "$1" && find -L . -type f ! -path './src/*' ! -path '*/.*' | sed 's|^\./||' | LC_ALL=C sort |
		while IFS= read -r f; do printf '%s  %s\n' "$(sha256sum < "$f" | cut -c1-64)" "$f"; done | sha256sum | cut -c1-64`
	out, err := exec.Command("bash", "-c", script, "bash", sd).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + strings.TrimSpace(string(out)); d != want {
		t.Errorf("digest %s, the documented recipe gives %s", d, want)
	}
}

// What a run can notice changes the digest; what it cannot (hidden files, src/) does not (runtime
// TestSkillAndRunDigestAreTheTrees: the digest the runtime gives a skill and its runs).
func TestDigestCoversThePackage(t *testing.T) {
	dir := t.TempDir()
	sd := fixture(t, dir, "dig", simple("dig", ""), "hello")
	digest := func() string {
		tree, err := bundle.Walk(sd, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		return tree.Digest
	}
	base := digest()
	for _, name := range []string{".git/HEAD", ".env", "src/main.go", "src/target/x.wasm"} {
		p := filepath.Join(sd, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("x"), 0o644))
		if d := digest(); d != base {
			t.Errorf("%s changed the digest", name)
		}
	}
	// A symlink out of the skill is not part of it; one inside is followed.
	outside := filepath.Join(dir, "outside.txt")
	must(t, os.WriteFile(outside, []byte("secret"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(sd, "out.md")))
	if d := digest(); d != base {
		t.Error("a symlink out of the skill changed the digest")
	}
	for _, change := range []struct{ name, data string }{
		{"skill.json", simple("dig", `"permissions":{"env":["X"]}`)}, // a new permission: a new version
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
}

// A tree over the digest's bounds is refused, saying why (runtime TestSkillOverTheDigestBoundsIsBroken:
// such a skill loads broken).
func TestDigestBounds(t *testing.T) {
	dir := t.TempDir()
	sd := fixture(t, dir, "many", simple("many", ""), "hello")
	for i := range bundle.MaxTreeFiles {
		p := filepath.Join(sd, "resources", "f"+strconv.Itoa(i))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o644))
	}
	_, err := bundle.Walk(sd, nil, false)
	if !errors.Is(err, bundle.ErrTreeTooLarge) {
		t.Fatalf("digest of %d+ files: %v", bundle.MaxTreeFiles, err)
	}
}
