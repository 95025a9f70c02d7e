package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link's target; fenced code is removed before it is looked for.
var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdFence = regexp.MustCompile("(?s)```.*?```")
	scheme  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// TestMarkdownLinks fails when a tracked Markdown file links to a file of the repository that is
// not there, so the README's contents and docs/design.md's file names stay true as files move.
func TestMarkdownLinks(t *testing.T) {
	root := repoRoot(t)
	files, err := trackedFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".md") || strings.Contains(f, "node_modules/") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // tracked but deleted in the work tree
		}
		for _, target := range relativeLinks(string(data)) {
			checked++
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(f), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links to %s, which is not in the repository: fix the link or restore the file", f, target)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d links: the Markdown files were not found", checked)
	}
}

// TestRelativeLinks checks the link reader: web links, anchors and fenced code are not files.
func TestRelativeLinks(t *testing.T) {
	doc := "[a](docs/abi.md) [b](docs/abi.md#2-memory) [c](https://wazero.io) [d](#contents) [e](mailto:x@y)\n" +
		"```md\n[f](gone.md)\n```\n[g](../LICENSE)\n"
	got := strings.Join(relativeLinks(doc), " ")
	if want := "docs/abi.md docs/abi.md ../LICENSE"; got != want {
		t.Fatalf("relativeLinks = %q, want %q", got, want)
	}
}

// relativeLinks returns the targets of doc's links to files, without their anchors.
func relativeLinks(doc string) []string {
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(mdFence.ReplaceAllString(doc, ""), -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target != "" && !scheme.MatchString(target) {
			out = append(out, target)
		}
	}
	return out
}
