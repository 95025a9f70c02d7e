package repocheck

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// citation matches a reference to a document a reader of the repository does not have: the
// numbered source documents the project started from, or the directory they were kept in. Code
// and docs say the behaviour itself instead. The brackets keep this file from matching itself.
// A random or fuzz seed is not a citation: the words are followed by no number.
var citation = regexp.MustCompile(`(?i)\bs[e]eds?[ _-]?#?0*[0-9]+\b|\bs[e]ed docs?\b|\bs[e]ed documents?\b|/w[o]rk/shared\b|shared/s[e]eds\b`)

// TestNoCitations fails when a tracked text file cites one of those documents again.
func TestNoCitations(t *testing.T) {
	root := repoRoot(t)
	files, err := trackedFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d files under %s: not the repository", len(files), root)
	}
	for _, f := range files {
		for _, hit := range citations(t, filepath.Join(root, f)) {
			t.Errorf("%s:%s: cites a document the repository does not have; write the behaviour itself", f, hit)
		}
	}
}

// TestCitationPattern keeps the pattern honest: each form is caught, random and fuzz seeds are not.
func TestCitationPattern(t *testing.T) {
	s := "se" + "ed"
	for _, c := range []struct {
		text string
		cite bool
	}{
		{"as " + s + " 001 says", true},
		{"in " + s + " 3's text protocol", true},
		{"the " + strings.ToUpper(s[:1]) + s[1:] + " 000 run", true},
		{s + "-004's load_skill", true},
		{"the " + s + " documents name it", true},
		{"read /wo" + "rk/shared/" + s + "s/001.txt", true},
		{"Math.random is " + s + "ed per run", false},
		{"the fuzz " + s + " corpus", false},
		{"var " + s + " [16]byte", false},
		{"for _, " + s + " := range cases", false},
		{"PYTHONHASH" + strings.ToUpper(s), false},
	} {
		if got := citation.MatchString(c.text); got != c.cite {
			t.Errorf("%q: cites = %v, want %v", c.text, got, c.cite)
		}
	}
}

// citations returns "line: text" for each line of a text file that cites; binary files have none.
func citations(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // tracked but deleted in the work tree
	}
	if err != nil {
		t.Fatal(err)
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil
	}
	var hits []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		if m := citation.FindString(sc.Text()); m != "" {
			hits = append(hits, strconv.Itoa(n)+": "+m)
		}
	}
	return hits
}

// repoRoot is the directory of the module's go.mod, two levels up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository's root: %v", err)
	}
	return root
}

// trackedFiles lists the repository's files relative to root: git's list when root is a git work
// tree, else every file but those of .git, node_modules and build directories (a source archive).
func trackedFiles(root string) ([]string, error) {
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output(); err == nil {
		return strings.Split(strings.TrimRight(string(out), "\x00"), "\x00"), nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == ".build" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			files = append(files, rel)
			return err
		}
		return nil
	})
	return files, err
}
