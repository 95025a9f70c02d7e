package repocheck

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryGuideIsLinked fails for each Markdown file in docs/ that README.md does not link to,
// so that a new guide is not one nobody can find.
func TestEveryGuideIsLinked(t *testing.T) {
	root := repoRoot(t)
	entries, err := os.ReadDir(filepath.Join(root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	var guides []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") {
			guides = append(guides, "docs/"+e.Name())
		}
	}
	if len(guides) < 5 {
		t.Fatalf("found %d Markdown files in %s: not the repository's docs", len(guides), filepath.Join(root, "docs"))
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := linkedFiles(string(readme))
	for _, g := range guides {
		if !linked[g] {
			t.Errorf("%s is not linked from README.md: link it from README.md (a line in its Guides list, or where it belongs)", g)
		}
	}
}

// TestLinkedFiles checks the reader of README.md's links: ./ and anchors do not matter; fenced
// code, web links and a path that is not a link's target are not links.
func TestLinkedFiles(t *testing.T) {
	doc := "[a](docs/abi.md) [b](./docs/skills.md#rendering) [c](https://example.com/docs/web.md)\n" +
		"see docs/plain.md\n```md\n[d](docs/fenced.md)\n```\n"
	var got []string
	for f := range linkedFiles(doc) {
		got = append(got, f)
	}
	slices.Sort(got)
	if want := []string{"docs/abi.md", "docs/skills.md"}; !slices.Equal(got, want) {
		t.Fatalf("linkedFiles = %q, want %q", got, want)
	}
}

// linkedFiles returns the files doc's links point to, as clean slash paths relative to doc's
// directory.
func linkedFiles(doc string) map[string]bool {
	linked := map[string]bool{}
	for _, target := range relativeLinks(doc) {
		linked[path.Clean(target)] = true
	}
	return linked
}
